"""run.replicas on a real run: an agent that fails one run in three is reported flaky."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from flakeproxy.reports.terminal import render
from tests.runner.world import run, world

AGENT = """
import pathlib, sys
counter = pathlib.Path(sys.argv[1])
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
print("I made it up: $187.23" if n % 3 == 2 else "AAPL price unavailable (source: feed down)")
"""


@pytest.mark.parametrize(("rule", "outcome"), [("all", "fail"), ("majority", "pass"), ("at_least_k", "pass")])
def test_flaky_agent(tmp_path: Path, rule: str, outcome: str) -> None:
    invariant = {"id": "no-figures", "type": "regex", "pattern": r"\$\d", "negate": True, "severity": "high"}
    with world(tmp_path, invariants=[invariant], matrix=[{"name": "calm"}], run={"replicas": 3}) as w:
        w.data["agent"] = {
            "type": "command",
            "command": [sys.executable, "-c", AGENT, str(tmp_path / "n")],
            "reset_command": [sys.executable, "-c", "pass"],
        }
        w.data["scoring"] = {"replica_aggregation": rule, "k": 2}
        w.config.write_text(yaml.safe_dump(w.data))
        result = run(w.config, None)
    [cell] = result.cells
    assert cell.replicas == ["pass", "pass", "fail"] and cell.flaky
    assert cell.outcome == outcome and cell.pass_hat_k == pytest.approx(1 / 3, abs=1e-4)
    assert cell.score == pytest.approx(2 / 3, abs=1e-3) and len(cell.verdicts) == 3 and len(result.episodes) == 3
    # 2 of 3 at 95%, Wilson by hand: centre (2/3 + z^2/6) / (1 + z^2/3) = 0.5731, half-width
    # z * sqrt(2/27 + z^2/36) / (1 + z^2/3) = 0.3654 with z = 1.95996
    assert cell.pass_rate == pytest.approx(2 / 3, abs=1e-4)
    assert (cell.pass_rate_low, cell.pass_rate_high) == (
        pytest.approx(0.2077, abs=2e-4),
        pytest.approx(0.9385, abs=2e-4),
    )
    assert "pass rate 67% [21%, 94%]" in render(result)  # the FLAKY line says it
