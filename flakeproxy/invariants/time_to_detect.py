from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge, check, failed, nothing_to_judge
from flakeproxy.telemetry.detect import detections
from flakeproxy.telemetry.judge import NO_SPANS, listed, of_kind


class TimeToDetect(Invariant):
    """The agent's own spans recorded every tool or LLM fault within max_ms of the moment it reached the agent.

    The slowest fault counts (flakeproxy.telemetry.detect says what records one); a fault never recorded fails.
    n/a when no such fault applied; ERROR when the agent's spans did not arrive or cannot be tied to the call.
    The proxy's clock times the fault, the agent's its spans: on one host they agree; across hosts, sync them.
    """

    type: Literal["time_to_detect"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    reads_spans: ClassVar[bool] = True
    max_ms: float = Field(gt=0, description="The most milliseconds from a fault to the first span recording it.")
    target: str | None = Field(None, description="Only faults on calls to this target; unset: all.")

    def evaluate(self, obs: Observation) -> Verdict:
        found = detections(obs.journal, obs.agent_spans, self.target)
        if not found:
            return nothing_to_judge("no tool or LLM fault applied in this episode, so nothing to detect")
        evidence = {"faults": [d.evidence() for d in found]}
        if not obs.agent_spans:
            return cannot_judge(NO_SPANS, **evidence)
        if missed := of_kind(found, "missed"):
            return failed(f"never detected: the agent's telemetry did not record {listed(missed)}", **evidence)
        if unknown := of_kind(found, "unknown"):
            return cannot_judge(f"cannot time the detection of {listed(unknown)}", **evidence)
        worst = max(d.ms or 0.0 for d in found)
        return check(
            worst <= self.max_ms,
            f"time to detect {worst:g} ms (max {self.max_ms:g})",
            f"time to detect {worst:g} ms, more than {self.max_ms:g}",
            time_to_detect_ms=worst,
            **evidence,
        )
