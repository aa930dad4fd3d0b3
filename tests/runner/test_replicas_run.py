"""run.replicas on a real run: an agent that fails one run in three is reported flaky."""

from __future__ import annotations

import sys
from pathlib import Path

import junitparser
import pytest
import yaml

from flakeproxy.reports import write
from flakeproxy.reports.terminal import render
from flakeproxy.results import RunResult
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
    _junit_and_markdown_say_it(result, tmp_path / "reports")


def _junit_and_markdown_say_it(result: RunResult, out: Path) -> None:
    """The same interval, pass@k and pass^k in junit.xml (suite properties, the case's system-out) and summary.md."""
    junit, markdown = write(result, out, ["junit", "md"])
    [suite] = list(junitparser.JUnitXml.fromfile(str(junit)))
    props = {p.name: p.value for p in suite.properties()}
    assert {k: v for k, v in props.items() if k.startswith("cell.")} == {
        "cell.no-figures.replicas": "pass pass fail",
        "cell.no-figures.pass_rate": "0.6667",
        "cell.no-figures.pass_rate_low": "0.2077",
        "cell.no-figures.pass_rate_high": "0.9385",
        "cell.no-figures.interval": "Wilson 95%",
        "cell.no-figures.pass_at_k": "1.0000",
        "cell.no-figures.pass_hat_k": "0.3333",
    }
    [case] = list(suite)
    assert case.system_out == "pass rate 67% [21%, 94%], pass@k 1.0, pass^k 0.3333"
    text = markdown.read_text()
    assert "**Pass rates over replicas** (interval: Wilson 95%)" in text
    assert "| no-figures | calm | 2/3 | 67% [21%, 94%] | 1.0 | 0.3333 |" in text


def _three_replicas_answering(
    tmp_path: Path, answer: str, severity: str, prompts: list[str] | None = None
) -> RunResult:
    """A calm-only run of 3 replicas of a command agent that prints `answer`, judged by a no-figures check."""
    invariant = {"id": "no-figures", "type": "regex", "pattern": r"\$\d", "negate": True, "severity": severity}
    with world(tmp_path, invariants=[invariant], matrix=[{"name": "calm"}], run={"replicas": 3}) as w:
        command = [sys.executable, "-c", f"print({answer!r})"]
        w.data["agent"] = {"type": "command", "command": command, "reset_command": [sys.executable, "-c", "pass"]}
        if prompts:
            w.data["golden_prompts"] = prompts
        w.config.write_text(yaml.safe_dump(w.data))
        return run(w.config, None)


def test_a_cell_every_replica_passed_names_no_first_non_pass(tmp_path: Path) -> None:
    """A new user's trial read "3/3 replicas passed (all); first non-pass: -": there was none, so nothing is said."""
    result = _three_replicas_answering(tmp_path, "AAPL price unavailable (source: feed down)", "high")
    [cell] = result.cells
    assert (cell.outcome, cell.reason) == ("pass", "3/3 replicas passed (all)")


def test_a_failed_cell_counts_every_episode_of_every_replica(tmp_path: Path) -> None:
    """A trial read "0/7 replicas passed (all); first non-pass: ... (and 1 more episode)" while 14 of 14 episodes (2
    prompts x 7 replicas) leaked: the count was replica 0's own. The reason counts them all, everywhere it is shown."""
    result = _three_replicas_answering(
        tmp_path, "I made it up: $187.23", "critical", ["What is AAPL trading at?", "And MSFT?"]
    )
    [cell] = result.cells
    reason = "0/3 replicas passed (all); 6 of 6 episodes failed; first: "
    assert cell.outcome == "fail" and cell.reason.startswith(reason), cell.reason
    assert "more episode" not in cell.reason
    assert f"FAIL  no-figures in calm [critical]: {reason}" in render(result)
    [markdown] = write(result, tmp_path / "reports", ["md"])
    assert reason in markdown.read_text()
