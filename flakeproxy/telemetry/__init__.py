"""OpenTelemetry both ways: the agent's own spans in (proxy.otlp: kept per episode, judged by telemetry_noticed and
time_to_detect) and flakeproxy's spans out (telemetry: each proxied call in the agent's trace, each verdict as a
gen_ai.evaluation.result event). Pure: no mitmproxy; the OpenTelemetry packages only where the `otel` extra is
needed (decoding protobuf, exporting)."""

from __future__ import annotations

from flakeproxy.telemetry.spans import AgentSpan, SpanEvent

__all__ = ["AgentSpan", "SpanEvent"]
