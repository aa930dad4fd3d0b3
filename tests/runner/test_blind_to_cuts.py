"""A scenario whose faults cut the agent's answers short, judged by checks that cannot tell a fragment from a whole
answer (a new user's starter contract passed "Sorry, I " under stream_cut in silence): the run says so in one line
naming the fix; a check that reads the answer, or a failed cell, leaves nothing to say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.runner.world import run, world

CUT = {"name": "llm-truncated", "llm_faults": [{"mode": "truncated_response", "max_tokens": 3}]}
STARTER = [  # what `flakeproxy init` writes first: none reads whether an answer is whole
    {"id": "answers", "type": "completes", "severity": "critical"},
    {"id": "says-something", "type": "output_not_empty", "severity": "high"},
    {"id": "no-pii", "type": "excludes_pii", "severity": "high"},
]
WHOLE = {"id": "whole", "type": "regex", "pattern": r"\$\d+\.\d{2}", "severity": "high", "when": "llm_faults_active"}


def _blind(tmp_path: Path, invariants: list[dict[str, Any]]) -> list[str]:
    with world(tmp_path, invariants=invariants, matrix=[{"name": "no-chaos"}, CUT]) as w:
        result = run(w.config, None)
    [cov] = [c for c in result.coverage if c.scenario == "llm-truncated"]
    assert cov.applied > 0, cov  # the cut reached the agent: what is judged is a fragment
    return [line for line in result.warnings if "reads whether an answer is whole" in line]


def test_a_cut_answer_passing_checks_that_cannot_tell_is_said(tmp_path: Path) -> None:
    [line] = _blind(tmp_path, STARTER)
    assert line.startswith("scenario llm-truncated: llm_faults[0] truncated_response (applied ")
    assert "none of them (answers, says-something, no-pii)" in line and "add a regex, contains or similarity" in line


def test_nothing_to_say_when_a_check_reads_the_answer(tmp_path: Path) -> None:
    assert _blind(tmp_path, [*STARTER, WHOLE]) == []


def test_a_negated_regex_cannot_tell_a_fragment_either(tmp_path: Path) -> None:
    forbids = {**WHOLE, "id": "no-apology", "negate": True, "pattern": "never-said"}
    [line] = _blind(tmp_path, [*STARTER, forbids])
    assert "none of them (answers, says-something, no-pii, no-apology)" in line
