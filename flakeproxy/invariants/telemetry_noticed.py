from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge, failed, nothing_to_judge, passed
from flakeproxy.telemetry.detect import detections
from flakeproxy.telemetry.judge import NO_SPANS, listed, of_kind


class TelemetryNoticed(Invariant):
    """Every tool or LLM fault applied in the episode is recorded in the agent's own spans (proxy.otlp).

    Recorded: an error (status ERROR, `error.type` or an exception event) on the span that made the faulted call
    (named by the call's `traceparent`) or on one of its ancestors, or a retry of it: a later span with the same
    name, parent and URL/model/tool that sent the proxy the very request the faulted call sent (the next step of
    a tool-calling loop sends another), or one with `http.request.resend_count` >= 1 (flakeproxy.telemetry.detect).
    n/a when no such fault applied; ERROR when the agent's spans did not arrive or a faulted call carried no
    traceparent to find its span by.
    """

    type: Literal["telemetry_noticed"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    reads_spans: ClassVar[bool] = True
    target: str | None = Field(None, description="Only faults on calls to this target; unset: all.")

    def evaluate(self, obs: Observation) -> Verdict:
        found = detections(obs.journal, obs.agent_spans, self.target)
        if not found:
            return nothing_to_judge("no tool or LLM fault applied in this episode, so nothing to notice")
        evidence = {"faults": [d.evidence() for d in found]}
        if not obs.agent_spans:
            return cannot_judge(NO_SPANS, **evidence)
        if missed := of_kind(found, "missed"):
            return failed(f"the agent's telemetry did not record {listed(missed)}", **evidence)
        if unknown := of_kind(found, "unknown"):
            return cannot_judge(f"cannot tell whether the agent's telemetry recorded {listed(unknown)}", **evidence)
        slowest = max(d.ms or 0.0 for d in found)
        return passed(
            f"the agent's telemetry recorded all {len(found)} applied fault(s), the last after {slowest:g} ms",
            **evidence,
        )
