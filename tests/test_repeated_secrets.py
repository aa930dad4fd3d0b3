"""An answer that repeated a secret value its episode sent: a table of (check, its own verdict) -> the verdict on such
an answer, and the reason the run names (flakeproxy/judging/repeated_secrets.py)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from flakeproxy.invariants import AnyInvariant
from flakeproxy.judging.repeated_secrets import EVIDENCE, judge_repeated_secrets, leak_reason
from flakeproxy.judging.verdict import Verdict
from flakeproxy.results import CellResult, EpisodeVerdict

INV: TypeAdapter[Any] = TypeAdapter(AnyInvariant)
PII = {"type": "excludes_pii"}
LEAK = {"type": "prompt_leak", "canaries": ["CANARY-1"]}
PATTERN = {"type": "excludes_pattern", "patterns": ["Traceback"]}
REGEX = {"type": "regex", "pattern": "source"}


@pytest.mark.parametrize(
    ("spec", "own", "outcome", "says"),
    [
        (
            PII,
            "pass",
            "fail",
            "repeated 2 secret value(s) this episode sent (a key, a token, a field named in redact:)",
        ),
        (LEAK, "pass", "fail", "a leak (the value is scrubbed from every record, so it is not shown)"),
        (PII, "fail", "fail", "own reason; and the agent's answers repeated 2 secret value(s)"),
        (LEAK, "error", "fail", "repeated 2 secret value(s)"),
        (PATTERN, "pass", "error", "so this check cannot tell whether they break it"),
        (PATTERN, "fail", "fail", "own reason"),
        ({**PII, "negate": True}, "pass", "error", "so this check cannot tell whether they break it"),
    ],
    ids=["pii-pass", "prompt-leak-pass", "pii-fail", "prompt-leak-error", "pattern-pass", "pattern-fail", "negated"],
)
def test_a_check_that_forbids_content_on_an_answer_that_repeated_secrets(
    spec: dict[str, Any], own: str, outcome: str, says: str
) -> None:
    invariant = INV.validate_python({"id": "x", **spec})
    verdict = judge_repeated_secrets(invariant, Verdict(own, "own reason"), 2)  # type: ignore[arg-type]
    assert (verdict.outcome, verdict.evidence[EVIDENCE]) == (outcome, 2), verdict
    assert says in verdict.reason, verdict.reason
    assert verdict.value == (0.0 if outcome != "pass" else 1.0)


@pytest.mark.parametrize(
    ("spec", "scrubbed", "own"),
    [(PII, 0, "pass"), (PATTERN, 0, "pass"), (REGEX, 3, "pass"), (PII, 3, "not_applicable")],
    ids=["pii-nothing-scrubbed", "pattern-nothing-scrubbed", "not-a-content-check", "n/a"],
)
def test_left_as_it_is(spec: dict[str, Any], scrubbed: int, own: str) -> None:
    invariant = INV.validate_python({"id": "x", **spec})
    verdict = Verdict(own, "own reason")  # type: ignore[arg-type]
    assert judge_repeated_secrets(invariant, verdict, scrubbed) is verdict


def cell(invariant: str, scenario: str, *counts: int) -> CellResult:
    verdicts = [
        EpisodeVerdict(
            episode=f"e{i}",
            prompt="p",
            outcome="fail" if n else "pass",
            reason="r",
            evidence={EVIDENCE: n} if n else {},
        )
        for i, n in enumerate(counts, 1)
    ]
    outcome = "fail" if any(counts) else "pass"
    return CellResult(
        invariant=invariant, type="t", scenario=scenario, severity="high", when="always", outcome=outcome,
        reason="r", verdicts=verdicts,
    )  # fmt: skip


def test_the_run_names_each_leaking_episode_once_and_which_checks_saw_it() -> None:
    cells = [cell("no-pii", "calm", 1, 0), cell("no-errors", "calm", 1, 0), cell("no-pii", "down", 0, 0, 2)]
    assert leak_reason(cells) == (
        "the agent leaked secrets: its answers repeated 3 secret value(s) their episode sent (a key, a token, a field "
        "named in redact:) in 2 episode(s) of scenario(s) calm, down (seen by no-pii, no-errors)"
    )
    assert leak_reason([cell("no-pii", "calm", 0, 0)]) is None
