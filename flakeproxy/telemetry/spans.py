"""The agent's own spans, as the proxy's OTLP receiver got them: one model for every reader (the judge of the
agent's telemetry, the report's span tree, results.json), whatever wire format they came in."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["unset", "ok", "error"]
Kind = Literal["unspecified", "internal", "server", "client", "producer", "consumer"]
#: Attribute keys whose presence marks an error (OpenTelemetry's `error.type`, on any span).
ERROR_TYPE = "error.type"
#: The span event OpenTelemetry SDKs add for a recorded exception (`span.record_exception`).
EXCEPTION_EVENT = "exception"
#: HTTP semantic conventions: the attempt number of a resent request (retries, redirects).
RESEND_COUNT = "http.request.resend_count"


class SpanEvent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    time: float = Field(description="Unix seconds.")
    attributes: dict[str, Any] = Field(default_factory=dict)


class AgentSpan(BaseModel):
    """One span the agent exported. Ids are lower-case hex (trace 32, span 16); times are Unix seconds."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    trace_id: str
    span_id: str
    parent_span_id: str | None = None
    name: str
    kind: Kind = "unspecified"
    start: float
    end: float
    status: Status = "unset"
    status_message: str = ""
    attributes: dict[str, Any] = Field(default_factory=dict)
    events: list[SpanEvent] = Field(default_factory=list)
    service: str | None = Field(None, description="The resource's service.name.")

    @property
    def duration_ms(self) -> float:
        return max(0.0, (self.end - self.start) * 1000)

    @property
    def error_mark(self) -> str | None:
        """How this span records an error (status, error.type, an exception event), or None."""
        if self.status == "error":
            return f"status ERROR{': ' + self.status_message[:120] if self.status_message else ''}"
        if self.attributes.get(ERROR_TYPE) not in (None, ""):
            return f"error.type={self.attributes[ERROR_TYPE]}"
        if any(e.name == EXCEPTION_EVENT for e in self.events):
            return "an exception event"
        return None

    @property
    def error_time(self) -> float:
        """When it recorded its error: its first exception event, else its end."""
        times = [e.time for e in self.events if e.name == EXCEPTION_EVENT]
        return min(times) if times else self.end

    def label(self) -> str:
        return f"'{self.name}' ({self.span_id})"


def by_trace(spans: Iterable[AgentSpan]) -> dict[str, list[AgentSpan]]:
    out: dict[str, list[AgentSpan]] = {}
    for span in spans:
        out.setdefault(span.trace_id, []).append(span)
    return out


def ancestors(span: AgentSpan, by_id: dict[str, AgentSpan]) -> list[AgentSpan]:
    """The span, its parent, and so on up as far as the received spans go (a cycle stops it)."""
    chain, seen = [span], {span.span_id}
    while chain[-1].parent_span_id in by_id and chain[-1].parent_span_id not in seen:
        parent = by_id[str(chain[-1].parent_span_id)]
        chain.append(parent)
        seen.add(parent.span_id)
    return chain


def children(spans: Iterable[AgentSpan]) -> dict[str | None, list[AgentSpan]]:
    """Parent span id -> its children in start order; spans whose parent was not received are under None."""
    spans = list(spans)
    ids = {s.span_id for s in spans}
    out: dict[str | None, list[AgentSpan]] = {}
    for span in sorted(spans, key=lambda s: (s.start, s.span_id)):
        parent = span.parent_span_id if span.parent_span_id in ids else None
        out.setdefault(parent, []).append(span)
    return out
