"""OTLP/JSON trace exports (ExportTraceServiceRequest) into AgentSpans.

As the OTLP specification's JSON encoding has it: lowerCamelCase keys (the proto's own snake_case names are
accepted too, as protobuf's JSON mapping allows), trace and span ids as hex strings (not base64), 64-bit integers
as decimal strings or numbers, enums as integers (their names are accepted too).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from flakeproxy.proxycore.redact import Redactor
from flakeproxy.telemetry import intake
from flakeproxy.telemetry.spans import AgentSpan, SpanEvent

_KIND_NAMES = {f"SPAN_KIND_{k.upper()}": i for i, k in enumerate(intake.KINDS)}
_STATUS_NAMES = {f"STATUS_CODE_{s.upper()}": i for i, s in enumerate(intake.STATUSES)}


class BadExport(ValueError):
    """The body is not an OTLP trace export; the message says what is wrong."""


def _get(data: dict[str, Any], camel: str, default: Any = None) -> Any:
    if camel in data:
        return data[camel]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return data.get(snake, default)


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _enum(value: Any, names: dict[str, int]) -> int:
    return names.get(value, 0) if isinstance(value, str) and not value.isdigit() else _int(value)


def value(any_value: Any) -> Any:
    """An AnyValue as plain JSON: strings, bools, ints, floats, lists, dicts; bytes as base64 text."""
    if not isinstance(any_value, dict):
        return None
    if "stringValue" in any_value or "string_value" in any_value:
        return str(_get(any_value, "stringValue"))
    if "boolValue" in any_value or "bool_value" in any_value:
        return bool(_get(any_value, "boolValue"))
    if "intValue" in any_value or "int_value" in any_value:
        return _int(_get(any_value, "intValue"))
    if "doubleValue" in any_value or "double_value" in any_value:
        return float(_get(any_value, "doubleValue") or 0.0)
    if (array := _get(any_value, "arrayValue")) is not None:
        return [value(v) for v in (array.get("values") or [])[: intake.MAX_ITEMS]]
    if (kvlist := _get(any_value, "kvlistValue")) is not None:
        return dict(_pairs(kvlist.get("values") or []))
    if (raw := _get(any_value, "bytesValue")) is not None:
        return str(raw) if isinstance(raw, str) else base64.b64encode(bytes(raw)).decode()
    return None


def _pairs(items: Any) -> list[tuple[str, Any]]:
    if not isinstance(items, list):
        return []
    return [(str(kv.get("key", "")), value(kv.get("value"))) for kv in items if isinstance(kv, dict)]


def _events(items: Any) -> list[SpanEvent]:
    if not isinstance(items, list):
        return []
    return [
        SpanEvent(
            name=str(e.get("name", ""))[:256],
            time=_int(_get(e, "timeUnixNano")) / 1e9,
            attributes=intake.attributes(_pairs(e.get("attributes"))),
        )
        for e in items[: intake.MAX_EVENTS]
        if isinstance(e, dict)
    ]


def _span(data: dict[str, Any], service: str | None, redactor: Redactor) -> AgentSpan | None:
    trace_id = intake.hex_id(str(_get(data, "traceId", "")), 32)
    span_id = intake.hex_id(str(_get(data, "spanId", "")), 16)
    if trace_id is None or span_id is None:
        return None  # a span without valid ids cannot be placed in any trace
    status = _get(data, "status") or {}
    return intake.span(
        trace_id=trace_id,
        span_id=span_id,
        parent=intake.hex_id(str(_get(data, "parentSpanId", "") or ""), 16),
        name=str(data.get("name", "")),
        kind=_enum(data.get("kind"), _KIND_NAMES),
        start_ns=_int(_get(data, "startTimeUnixNano")),
        end_ns=_int(_get(data, "endTimeUnixNano")),
        attrs=intake.attributes(_pairs(data.get("attributes"))),
        events=_events(data.get("events")),
        status=_enum(status.get("code"), _STATUS_NAMES),
        message=str(status.get("message", "")),
        service=service,
        redactor=redactor,
    )


def _service(resource: Any) -> str | None:
    attributes = dict(_pairs((resource or {}).get("attributes")))
    name = attributes.get("service.name")
    return str(name)[:256] if name is not None else None


def decode(body: bytes, redactor: Redactor) -> list[AgentSpan]:
    """The spans of one OTLP/JSON export; BadExport when it is not one."""
    try:
        data = json.loads(body)
    except ValueError as e:
        raise BadExport(f"not JSON ({e})") from e
    if not isinstance(data, dict) or not isinstance(_get(data, "resourceSpans", []), list):
        raise BadExport("not an ExportTraceServiceRequest: expected an object with resourceSpans")
    out: list[AgentSpan] = []
    for resource_spans in _get(data, "resourceSpans", []):
        if not isinstance(resource_spans, dict):
            continue
        service = _service(resource_spans.get("resource"))
        for scope_spans in _get(resource_spans, "scopeSpans", []) or []:
            for item in (scope_spans or {}).get("spans") or []:
                span = _span(item, service, redactor) if isinstance(item, dict) else None
                out += [span] if span is not None else []
    return out
