"""The rate rule on a cell none of whose replicas could be judged states no pass rate."""

from __future__ import annotations

import yaml

from flakeproxy import parse_config
from flakeproxy.judging.cells import Context, judge_cell
from flakeproxy.results import Episode
from tests.config.base_config import BASE


def test_an_all_error_cell_states_no_interval() -> None:
    """A trial's agent exited 1 whenever its tool failed: "ERROR ...: 0/20 passed, 95% interval 0.00-0.17 is below
    0.70 (rate)", an interval read as evidence the rule was broken, where nothing was judged."""
    data = yaml.safe_load(BASE)
    data["contract"]["invariants"] = [{"id": "cites", "type": "regex", "pattern": "source", "severity": "critical"}]
    data["scoring"] = {"replica_aggregation": "rate", "min_pass_rate": 0.7}
    data["run"] = {"replicas": 4}
    config = parse_config(yaml.safe_dump(data), "t.yaml")
    episodes = [
        Episode(
            id=f"e{n}",
            scenario="no-chaos",
            prompt="What is AAPL trading at?",
            prompt_index=0,
            replica=n,
            label=f"l{n}",
            error="agent command exited 1",
        )
        for n in range(4)
    ]
    cell = judge_cell(config.contract.invariants[0], config.matrix[0], episodes, Context(config))  # type: ignore[union-attr]
    assert cell.outcome == "error"
    assert cell.reason.startswith("none of its 4 replicas could be judged, so it has no pass rate to state (rate)")
    assert "interval" not in cell.reason
