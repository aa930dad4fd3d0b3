"""summary.md: short, the verdict and score, failing cells with reasons, silent scenarios; agent text inert."""

from __future__ import annotations

from flakeproxy.reports.markdown import escape, render
from flakeproxy.results import RunResult
from tests.reports.conftest import interrupted


def test_naive_summary_lists_the_failures(demo: dict[str, RunResult]) -> None:
    text = render(demo["naive"])
    assert text.startswith("## ❌ flakeproxy: Finance Agent Contract: **FAIL**")
    assert "Resilience score **61.9%**" in text
    rows = [line for line in text.splitlines() if line.startswith("| FAIL |")]
    failed = [c for c in demo["naive"].cells if c.outcome == "fail"]
    assert len(rows) == len(failed) == 13
    assert all(row.count(" | ") == 4 for row in rows)  # no reason broke out of its table cell
    assert "| FAIL | never\\-fabricate\\-when\\-tools\\-fail |" not in text  # hyphens stay readable
    assert "| FAIL | never-fabricate-when-tools-fail | tool-down | critical | negated: matches" in text
    assert len(text) < 4500  # a PR comment stays short (4028 with each FAIL citing what its check read)


def test_careful_summary_is_short(demo: dict[str, RunResult]) -> None:
    text = render(demo["careful"])
    assert "**PASS**" in text and "100.0%" in text and "| FAIL |" not in text
    folded = text[text.index("<details><summary>Spend per scenario") : text.index("</details>")]  # collapsed
    assert len(text.replace(folded, "").splitlines()) < 10


def test_agent_text_is_inert() -> None:
    payload = "<img src=x onerror=alert(1)><script>alert(2)</script> | **bold** [link](http://x) `code` $x$"
    out = escape(payload)
    assert "<" not in out and ">" not in out
    assert out.count("|") == out.count("\\|") and "\\*\\*bold\\*\\*" in out and "\\[link\\]" in out
    assert "\\`code\\`" in out and "\\$x\\$" in out
    assert escape("a\nb\n\nc") == "a b c" and len(escape("x" * 1000)) == 300


def test_scenarios_that_injected_nothing_and_interruption(demo: dict[str, RunResult]) -> None:
    result = demo["naive"].model_copy(deep=True)
    silent = next(c for c in result.coverage if c.scenario == "llm-stream-cut")
    silent.applied = 0
    text = render(result)
    assert "**Scenarios that injected nothing**" in text and text.count("llm\\-stream\\-cut") == 0
    assert "injected nothing** (no fault changed what the agent received): llm-stream-cut" in text
    stopped = render(interrupted(demo["naive"]))
    assert "**INCOMPLETE**" in stopped and "> **Interrupted.** The run was interrupted" in stopped


def test_a_run_that_stopped_by_itself_is_not_called_interrupted(demo: dict[str, RunResult]) -> None:
    """A trial's run stopped on an agent that answered nothing calm, and its reports said "interrupted"."""
    why = "InfrastructureError: the agent answered none of the one episode of the calm scenario no-chaos"
    stopped = interrupted(demo["naive"]).model_copy(update={"interrupted_by": why})
    text = render(stopped)
    assert f"> **Stopped early.** The run stopped early ({why}): this report shows only" in text
    assert "nterrupted" not in text
