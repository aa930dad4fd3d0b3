"""Did the agent's own telemetry record each fault flakeproxy applied, and how soon? (pure)

A faulted call is tied to the agent's span that made it by the `traceparent` the call carried (its parent id is
the agent's client span, or the span that injected the context). The fault counts as recorded when:
- an error: that span, or one of its ancestors, has status ERROR, an `error.type` or an `exception` event; it was
  recorded at the first exception event's time, else at the span's end;
- a retry: a span under the same parent, with the same name and aim (URL, server, model, tool), that started once the
  call had ended or says it is a resend (`http.request.resend_count` >= 1); recorded at its start.
The fault happened when the proxy had handed the agent all of the faulted exchange (start + latency).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

from flakeproxy.telemetry.spans import RESEND_COUNT, AgentSpan, ancestors, by_trace
from flakeproxy.wire.record import FaultRecord, read_fault
from flakeproxy.wire.trace import context_of

Found = Literal["recorded", "missed", "unknown"]
#: fault sections whose faults break a call (context attacks change content, which no error status records)
CALL_FAULTS = ("tool_faults", "llm_faults")


@dataclass(frozen=True)
class Detection:
    """One applied fault and what the agent's telemetry made of it."""

    seq: Any
    fault: str
    target: str
    at: float  # when the fault reached the agent (Unix seconds)
    found: Found
    how: str  # the signal, or why there is none / why it cannot be told
    recorded_at: float | None = None

    @property
    def ms(self) -> float | None:
        """Milliseconds from the fault to the first span that recorded it (never negative: clocks may differ)."""
        return None if self.recorded_at is None else round(max(0.0, self.recorded_at - self.at) * 1000, 1)

    def evidence(self) -> dict[str, Any]:
        out = {"call": self.seq, "fault": self.fault, "target": self.target, "found": self.found, "how": self.how}
        return out | ({"time_to_detect_ms": self.ms} if self.ms is not None else {})


def call_context(entry: dict[str, Any]) -> tuple[str, str] | None:
    """(trace id, parent span id) from the traceparent a journal entry's request carried, or None."""
    headers = {str(k).lower(): str(v) for k, v in (entry.get("request_headers") or {}).items()}
    return context_of(headers.get("traceparent", ""))


def faulted_calls(
    journal: Iterable[dict[str, Any]], target: str | None = None
) -> list[tuple[dict[str, Any], FaultRecord]]:
    """The entries whose call fault applied (on a target matching the glob `target`, if given), in order."""
    out = []
    for entry in sorted(journal, key=lambda e: (e.get("started_at") or 0.0, e.get("seq") or 0)):
        record = read_fault(entry.get("fault"))
        if record is None or not record.applied or record.section not in CALL_FAULTS:
            continue
        if target is None or any(fnmatch.fnmatchcase(t, target) for t in entry.get("targets") or []):
            out.append((entry, record))
    return out


#: attributes that say what a span's operation was aimed at: a retry aims at the same (those the call has)
SAME_AIM = ("url.full", "http.url", "url.path", "server.address", "gen_ai.request.model", "gen_ai.tool.name")
#: a retry starts after the failed attempt ended (this much earlier is clock noise)
CLOCK_SLACK_S = 0.001


#: span id -> what the span sent through the proxy (method, URL, body, its size), from the journal's traceparents
Sent = dict[str, tuple[Any, ...]]


def sent_by_span(journal: Iterable[dict[str, Any]]) -> Sent:
    """What each of the agent's spans sent through the proxy, as the journal recorded it (its first call)."""
    out: Sent = {}
    for entry in journal:
        context = call_context(entry)
        if context is not None:
            request = (entry.get("method"), entry.get("url"), entry.get("request_body"), entry.get("request_bytes"))
            out.setdefault(context[1], request)
    return out


def _retries(call: AgentSpan, trace: list[AgentSpan], sent: Sent) -> list[AgentSpan]:
    """Later spans under the same parent that attempt the call's operation again: marked as a resend, or sending
    through the proxy the very request the faulted call sent. A later span of the same name and model that sent
    another request (the next step of a tool-calling loop: the tool's answer added) is not a retry, nor is one
    whose request the proxy did not see."""
    aim = {k: call.attributes[k] for k in SAME_AIM if k in call.attributes}
    out = []
    for s in trace:
        if s.parent_span_id != call.parent_span_id or s.span_id == call.span_id or s.name != call.name:
            continue
        resent = isinstance(s.attributes.get(RESEND_COUNT), int) and s.attributes[RESEND_COUNT] > 0
        again = (
            s.start >= call.end - CLOCK_SLACK_S and call.span_id in sent and sent.get(s.span_id) == sent[call.span_id]
        )
        if (again or resent) and all(s.attributes.get(k) == v for k, v in aim.items()):
            out.append(s)
    return sorted(out, key=lambda s: s.start)


def _signal(call: AgentSpan, trace: list[AgentSpan], sent: Sent) -> tuple[str, float] | None:
    """The earliest signal of the fault: (what it is, when it was recorded), or None."""
    by_id = {s.span_id: s for s in trace}
    found = [(f"{s.error_mark} on {s.label()}", s.error_time) for s in ancestors(call, by_id) if s.error_mark]
    found += [(f"a retry: {s.label()} sent the faulted request again", s.start) for s in _retries(call, trace, sent)]
    return min(found, key=lambda f: f[1]) if found else None


def detect(entry: dict[str, Any], record: FaultRecord, spans: list[AgentSpan], sent: Sent | None = None) -> Detection:
    latency = float(entry.get("latency_ms") or 0.0)
    target = ",".join(entry.get("targets") or []) or str(entry.get("url", "?"))
    at = float(entry.get("started_at") or 0.0) + latency / 1000
    base = Detection(entry.get("seq"), record.label, target, at, "unknown", "")
    context = call_context(entry)
    if context is None:
        return replace(base, how="the faulted call carried no traceparent, so the agent's span of it cannot be found")
    trace = by_trace(spans).get(context[0], [])
    if not trace:
        return replace(base, how=f"no span of its trace {context[0]} was received")
    call = next((s for s in trace if s.span_id == context[1]), None)
    if call is None:
        why = f"the agent's span {context[1]} that made the call was not received: its telemetry has no record of it"
        return replace(base, found="missed", how=why)
    signal = _signal(call, trace, sent if sent is not None else {})
    if signal is None:
        why = f"{call.label()} and its ancestors record no error, and no retry of it followed"
        return replace(base, found="missed", how=why)
    return replace(base, found="recorded", how=signal[0], recorded_at=signal[1])


def detections(journal: Iterable[dict[str, Any]], spans: list[AgentSpan], target: str | None = None) -> list[Detection]:
    journal = list(journal)
    sent = sent_by_span(journal)
    return [detect(entry, record, spans, sent) for entry, record in faulted_calls(journal, target)]
