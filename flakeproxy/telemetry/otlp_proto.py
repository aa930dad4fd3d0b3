"""OTLP/HTTP protobuf trace exports (ExportTraceServiceRequest) into AgentSpans, with the official generated
classes (opentelemetry-proto, in the `otel` extra: `pip install 'flakeproxy[otel]'`)."""

from __future__ import annotations

import base64
from typing import Any

from flakeproxy.proxycore.redact import Redactor
from flakeproxy.telemetry import intake
from flakeproxy.telemetry.otlp_json import BadExport
from flakeproxy.telemetry.spans import AgentSpan, SpanEvent


def value(any_value: Any) -> Any:
    """An AnyValue message as plain JSON (bytes as base64 text)."""
    which = any_value.WhichOneof("value")
    if which in ("string_value", "bool_value", "int_value", "double_value"):
        return getattr(any_value, which)
    if which == "array_value":
        return [value(v) for v in list(any_value.array_value.values)[: intake.MAX_ITEMS]]
    if which == "kvlist_value":
        return dict(_pairs(list(any_value.kvlist_value.values)[: intake.MAX_ITEMS]))
    if which == "bytes_value":
        return base64.b64encode(any_value.bytes_value).decode()
    return None


def _pairs(items: Any) -> list[tuple[str, Any]]:
    return [(kv.key, value(kv.value)) for kv in items]


def _span(item: Any, service: str | None, redactor: Redactor) -> AgentSpan | None:
    trace_id, span_id = intake.hex_id(item.trace_id, 32), intake.hex_id(item.span_id, 16)
    if trace_id is None or span_id is None:
        return None
    events = [
        SpanEvent(name=e.name[:256], time=e.time_unix_nano / 1e9, attributes=intake.attributes(_pairs(e.attributes)))
        for e in list(item.events)[: intake.MAX_EVENTS]
    ]
    return intake.span(
        trace_id=trace_id,
        span_id=span_id,
        parent=intake.hex_id(item.parent_span_id, 16),
        name=item.name,
        kind=int(item.kind),
        start_ns=int(item.start_time_unix_nano),
        end_ns=int(item.end_time_unix_nano),
        attrs=intake.attributes(_pairs(item.attributes)),
        events=events,
        status=int(item.status.code),
        message=item.status.message,
        service=service,
        redactor=redactor,
    )


def decode(body: bytes, redactor: Redactor) -> list[AgentSpan]:
    """The spans of one protobuf export; BadExport when the body does not parse as one."""
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as e:
        raise BadExport(f"not a protobuf ExportTraceServiceRequest ({e})") from e
    out: list[AgentSpan] = []
    for resource_spans in request.resource_spans:
        names = [value(kv.value) for kv in resource_spans.resource.attributes if kv.key == "service.name"]
        service = str(names[0])[:256] if names else None
        for scope_spans in resource_spans.scope_spans:
            for item in scope_spans.spans:
                span = _span(item, service, redactor)
                out += [span] if span is not None else []
    return out


def response(rejected: int = 0, why: str = "") -> bytes:
    """An ExportTraceServiceResponse, serialized: full success, or the spans it rejected and why."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    answer = ExportTraceServiceResponse()
    if rejected:
        answer.partial_success.rejected_spans = rejected
        answer.partial_success.error_message = why
    return bytes(answer.SerializeToString())
