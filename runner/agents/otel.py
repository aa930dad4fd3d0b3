"""Make an episode's trace the current OpenTelemetry context while a python agent runs, when the agent's
process has OpenTelemetry: its instrumented HTTP clients then send our traceparent and baggage on every
call, so the proxy ties them to the episode (run.attribution: trace) with no change to the agent."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from flakeproxy.wire.trace import BAGGAGE_KEY, TraceContext


@contextlib.contextmanager
def otel_context(trace: TraceContext | None) -> Iterator[None]:
    if trace is None:
        yield
        return
    try:
        from opentelemetry import baggage, context
        from opentelemetry import trace as otel
    except ImportError:  # the agent does not use OpenTelemetry: trace_headers() is its way
        yield
        return
    span = otel.NonRecordingSpan(
        otel.SpanContext(
            int(trace.trace_id, 16), int(trace.span_id, 16), is_remote=True, trace_flags=otel.TraceFlags(1)
        )
    )
    ctx = baggage.set_baggage(BAGGAGE_KEY, trace.cell, otel.set_span_in_context(span))
    token = context.attach(ctx)
    try:
        yield
    finally:
        context.detach(token)
