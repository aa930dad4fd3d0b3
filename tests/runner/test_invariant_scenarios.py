"""An invariant's `scenarios:` (a trial: "says the data is unavailable" could not be limited to the scenarios where
it is; `when: tool_faults_active` took in every tool fault): judged only in the scenarios it names, n/a elsewhere
with the reason, counted so by validate; a name that matches no scenario is refused."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.runner.world import INVARIANTS, MATRIX, cli, run, world

UNAVAILABLE = {
    "id": "says-unavailable",
    "type": "regex",
    "pattern": "(?i)unavailable|could not|cannot",
    "severity": "critical",
    "scenarios": ["search-tool-*"],
}


def test_an_invariant_is_judged_only_in_its_scenarios(tmp_path: Path) -> None:
    with world(tmp_path, invariants=[INVARIANTS[0], UNAVAILABLE]) as w:  # always-cite-source: every scenario runs
        result = run(w.config)
        validate = cli(w.config, command="validate")
    cells = {c.scenario: c for c in result.cells if c.invariant == "says-unavailable"}
    assert set(cells) == {s["name"] for s in MATRIX}
    assert cells["search-tool-down"].outcome == "pass", cells["search-tool-down"].reason  # the careful agent says so
    for name in ("no-chaos", "llm-degraded"):
        assert cells[name].outcome == "not_applicable"
        assert cells[name].reason == "not one of its scenarios (search-tool-*)"
    assert result.score is not None and result.score.verdict == "PASS"
    assert "= 6 cells (2 not applicable by `when` or `scenarios`)" in validate.stdout, validate.stdout


def test_a_scenario_name_that_matches_none_is_refused(tmp_path: Path) -> None:
    with world(tmp_path, invariants=[{**UNAVAILABLE, "scenarios": ["serch-tool-down"]}, INVARIANTS[0]]) as w:
        done = cli(w.config, command="validate")
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "contract.invariants[0].scenarios: 'serch-tool-down' matches no scenario of chaos_matrix; valid: no-chaos, "
        "search-tool-down, llm-degraded"
    ), done.stderr
    data = yaml.safe_load((tmp_path / "flakeproxy.yaml").read_text())
    assert data["contract"]["invariants"][0]["scenarios"] == ["serch-tool-down"]
