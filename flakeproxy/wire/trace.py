"""W3C trace context: what the runner sends the agent with each prompt, and how the proxy reads it back.

An agent instrumented with OpenTelemetry propagates the trace of the request it serves to its outgoing calls
(`traceparent`, and the `baggage` entries of that request). The runner opens each episode with a trace id of its
own, so a request carrying that trace id (or `flakeproxy.episode=<cell>` in its baggage) belongs to that episode.
"""

from __future__ import annotations

import contextvars
import hashlib
import re
from dataclasses import dataclass
from urllib.parse import unquote

#: The baggage entry that names the episode (proxy cell) outright.
BAGGAGE_KEY = "flakeproxy.episode"
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(?:-.*)?$")


@dataclass(frozen=True)
class TraceContext:
    """The trace one episode runs in: its trace id and the headers that carry it to the agent."""

    trace_id: str
    span_id: str
    cell: str

    @property
    def traceparent(self) -> str:
        return f"00-{self.trace_id}-{self.span_id}-01"

    @property
    def baggage(self) -> str:
        return f"{BAGGAGE_KEY}={self.cell}"

    def headers(self) -> dict[str, str]:
        return {"traceparent": self.traceparent, "baggage": self.baggage}

    def environment(self) -> dict[str, str]:
        """The same context for a process (OpenTelemetry's environment-variable carrier names)."""
        return {"TRACEPARENT": self.traceparent, "BAGGAGE": self.baggage}


def new_trace(episode: str, label: str, run_seed: int, nonce: str = "", cell: str = "") -> TraceContext:
    """A trace id per episode: derived from the run (its nonce) and the episode, never all zeros (invalid in
    W3C). `cell` (the baggage) may be filled in once the proxy has opened the episode's cell."""
    digest = hashlib.sha256(f"{run_seed}|{label}|{episode}|{nonce}".encode()).hexdigest()
    trace_id, span_id = digest[:32], digest[32:48]
    if int(trace_id, 16) == 0:
        trace_id = "1".rjust(32, "0")
    if int(span_id, 16) == 0:
        span_id = "1".rjust(16, "0")
    return TraceContext(trace_id, span_id, cell or episode)


def trace_id_of(traceparent: str) -> str | None:
    """The trace id of a `traceparent` header's value, or None when it is empty or invalid."""
    m = _TRACEPARENT.match(traceparent.strip().lower())
    if m is None or int(m.group(1), 16) == 0:
        return None
    return m.group(1)


def context_of(traceparent: str) -> tuple[str, str] | None:
    """(trace id, parent span id) of a `traceparent` header's value, or None when it is empty or invalid."""
    m = _TRACEPARENT.match(traceparent.strip().lower())
    return (m.group(1), m.group(2)) if m is not None and int(m.group(1), 16) != 0 else None


def baggage_episode(baggage: str) -> str | None:
    """The episode a `baggage` header's value names (flakeproxy.episode=<cell>), or None."""
    for member in baggage.split(","):
        key, _, value = member.partition("=")
        if key.strip() == BAGGAGE_KEY:
            return unquote(value.split(";", 1)[0].strip()) or None
    return None


#: The trace of the episode a python-callable agent is answering for, while flakeproxy calls it.
CURRENT_TRACE: contextvars.ContextVar[TraceContext | None] = contextvars.ContextVar("flakeproxy_trace", default=None)


def trace_headers() -> dict[str, str]:
    """For a python agent: the traceparent and baggage headers to send on its calls through the proxy ({} when
    flakeproxy is not running it). An agent instrumented with OpenTelemetry needs nothing: flakeproxy makes this
    trace current while it calls the agent."""
    trace = CURRENT_TRACE.get()
    return trace.headers() if trace else {}
