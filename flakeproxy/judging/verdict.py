"""What an invariant says about one cell: pass, fail, or error (could not judge), with reason and evidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from flakeproxy.telemetry.spans import AgentSpan

#: inconclusive is a cell's outcome under the rate rule (too few replicas to tell); no invariant returns it
Outcome = Literal["pass", "fail", "error", "not_applicable", "inconclusive"]


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)
    score: float | None = None  # in [0, 1]; None = 1 for pass, 0 otherwise

    @property
    def value(self) -> float:
        return self.score if self.score is not None else (1.0 if self.outcome == "pass" else 0.0)


def passed(reason: str, **evidence: Any) -> Verdict:
    return Verdict("pass", reason, evidence)


def failed(reason: str, **evidence: Any) -> Verdict:
    return Verdict("fail", reason, evidence)


def cannot_judge(reason: str, **evidence: Any) -> Verdict:
    return Verdict("error", reason, evidence)


def nothing_to_judge(reason: str, **evidence: Any) -> Verdict:
    """Not applicable: the episode holds nothing this check can judge (left out of the score, never a pass)."""
    return Verdict("not_applicable", reason, evidence)


def check(ok: bool, yes: str, no: str, **evidence: Any) -> Verdict:
    return passed(yes, **evidence) if ok else failed(no, **evidence)


def excerpt(text: str, start: int = 0, end: int | None = None, width: int = 60) -> str:
    """Text around [start, end), for evidence."""
    end = start if end is None else end
    lo, hi = max(0, start - width), min(len(text), end + width)
    return ("..." if lo else "") + text[lo:hi] + ("..." if hi < len(text) else "")


@dataclass(frozen=True)
class Observation:
    """What an invariant judges: one episode (one invocation of the agent), with what the run knows around it."""

    prompt: str
    text: str | None  # the answer; None when the agent errored
    latency_ms: float
    error: str | None = None
    journal: list[dict[str, Any]] = field(default_factory=list)
    baseline: str | None = None  # behavior_unchanged: the no-chaos answer to the same prompt
    workspace: str | None = None  # run.workspace, for file and command checks
    services: dict[str, Any] = field(default_factory=dict)  # the config's services, for sql checks
    judge: Any = None  # the config's judge section (JudgeConfig), for llm_as_judge
    scenario: str | None = None
    #: the calm (no-chaos) episode of the same prompt and replica: its journal, for amplification
    baseline_journal: list[dict[str, Any]] | None = None
    pricing: Any = None  # the config's pricing table (flakeproxy.config.pricing.PricingTable), for cost checks
    agent_spans: list[AgentSpan] = field(default_factory=list)  # the agent's own spans (proxy.otlp)
    #: the agent answered, but agent.response_path is wrong for it: why (flakeproxy.judging.calm_checks)
    unread: str | None = None
