"""The terminal report of a run that stopped early says nothing about the scenarios that never ran."""

from __future__ import annotations

from flakeproxy.reports.terminal import render
from flakeproxy.results import RunResult


def test_a_stopped_run_prints_no_fault_line_for_scenarios_that_did_not_run(demo: dict[str, RunResult]) -> None:
    """A new user's trial: exit 3 after the calm scenario printed `faults llm-rate-limited: decided 0, applied 0`
    for a scenario no episode of which ran. The engine's coverage of such a run lists every scenario, the ones
    that did not run with 0 episodes: those get no line."""
    full = demo["naive"]
    ran = set(full.scenarios[:2])
    coverage = [
        c if c.scenario in ran else c.model_copy(update={"episodes": 0, "decided": 0, "applied": 0, "faults": []})
        for c in full.coverage
    ]
    stopped = full.model_copy(
        update={
            "complete": False,
            "interrupted_by": "InfrastructureError: the agent died",
            "score": None,
            "coverage": coverage,
            "cells": [c for c in full.cells if c.scenario in ran],
            "episodes": [e for e in full.episodes if e.scenario in ran],
        }
    )
    said = [line.split(":")[0] for line in render(stopped).splitlines() if line.startswith("faults ")]
    chaos_that_ran = [c.scenario for c in full.coverage if c.chaos and c.scenario in ran]
    assert chaos_that_ran and said == [f"faults {name}" for name in chaos_that_ran]


def test_a_fail_line_shows_what_the_check_read_in_the_answer_escaped() -> None:
    """A new user's trial: `does not match /(?i)(could not|...)/` without the answer it read. The FAIL lines of
    the terminal and summary.md now cite the evidence's excerpt (as junit.xml and report.html do), one line,
    escaped: an ESC shown as text, Markdown and HTML inert."""
    from flakeproxy.reports import render

    hostile = "The orders system said:\n{ corrupted ] \x1b[31m<b>|invalid</b> json"
    verdicts = [
        {"episode": "e13", "prompt": "p", "outcome": "not_applicable", "reason": "n/a"},
        {"episode": "e14", "prompt": "p", "outcome": "fail", "reason": "turn 2: does not match /x/",
         "evidence": {"excerpt": hostile, "turn": 2}},
    ]  # fmt: skip
    cell = {
        "invariant": "honest",
        "type": "regex",
        "scenario": "malformed",
        "severity": "high",
        "when": "always",
        "outcome": "fail",
        "reason": "turn 2: does not match /x/",
        "episodes": ["e13", "e14"],
        "verdicts": verdicts,
    }
    passed = {**cell, "invariant": "cites", "outcome": "pass", "reason": "ok", "verdicts": []}  # fmt: skip
    result = RunResult.model_validate({
        "flakeproxy_version": "t", "versions": {}, "config_path": "c.yaml", "config_sha256": "0", "contract": "c",
        "seed": 0, "started_at": "t", "finished_at": "t", "complete": True, "scenarios": ["malformed"],
        "invariants": ["honest", "cites"], "cells": [cell, passed],
    })  # fmt: skip
    lines = render(result, "terminal").splitlines()
    at = lines.index("FAIL  honest in malformed [high]: turn 2: does not match /x/")
    assert (
        lines[at + 1]
        == '      answer (e14, turn 2): "The orders system said: { corrupted ] \\x1b[31m<b>|invalid</b> json"'
    )
    assert not any(line.startswith("      answer") for line in lines[at + 2 :])  # the PASS cell cites nothing
    row = next(line for line in render(result, "md").splitlines() if line.startswith("| FAIL | honest"))
    assert row.endswith(
        "<br>answer (e14, turn 2): “The orders system said: { corrupted \\] "
        "\\\\x1b\\[31m&lt;b&gt;\\|invalid&lt;/b&gt; json” |"
    ), row


def test_a_score_that_leaves_out_inconclusive_cells_says_so_wherever_it_is_shown(demo: dict[str, RunResult]) -> None:
    """A trial's adaptive run printed `resilience score 100.0%  INCONCLUSIVE` beside a cell whose episodes showed
    the raw error a third of the time: the score is over the decided cells, and now says it left the others out."""
    from flakeproxy.reports import markdown
    from flakeproxy.reports.facts import headline

    careful = demo["careful"]
    assert careful.score is not None and careful.score.resilience is not None
    score = careful.score.model_copy(update={"counts": {**careful.score.counts, "inconclusive": 2}})
    result = careful.model_copy(update={"score": score})
    said = f"resilience score {score.resilience:.1f}% of the decided cells (2 INCONCLUSIVE left out)  {score.verdict}"
    assert said in render(result).splitlines()
    assert headline(result) == (
        f"{score.resilience:.1f}%",
        "resilience score of the decided cells (2 INCONCLUSIVE left out)",
    )
    assert "of the decided cells (2 INCONCLUSIVE left out)" in markdown.render(result)
    assert f"resilience score {score.resilience:.1f}%  {score.verdict}" in render(careful).splitlines()


def test_a_pass_with_failing_non_critical_cells_says_so(demo: dict[str, RunResult]) -> None:
    """A trial's run PASSed while a high check failed a third of its cells, and the verdict line said nothing."""
    careful = demo["careful"]
    assert careful.score is not None and careful.score.verdict == "PASS"
    cells = [c.model_copy(update={"outcome": "fail"}) if i == 0 else c for i, c in enumerate(careful.cells)]
    cells = [c if c.outcome != "fail" else c.model_copy(update={"severity": "high"}) for c in cells]
    passed = careful.model_copy(update={"cells": cells})
    [line] = [line for line in render(passed).splitlines() if line.startswith("resilience score")]
    first = cells[0]
    assert line.endswith(
        f"PASS; 1 cell(s) of non-critical checks failed or could not be judged ({first.invariant} in "
        f"{first.scenario}): they lower the score, they do not fail the run (severity: critical, or "
        "scoring.min_resilience, makes them)"
    ), line
    [clean] = [line for line in render(careful).splitlines() if line.startswith("resilience score")]
    assert clean.endswith("PASS"), clean
