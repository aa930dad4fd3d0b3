"""What the receiver keeps of a span: capped (attributes, events, string lengths) and redacted as the journal is.

Redaction, per span as the journal does it per entry: secret-named keys and credential-shaped values (also as
tokens inside free text), secret fields and `name=value` pairs inside strings; then every value redacted anywhere
in the span is scrubbed from all of its other strings (a key in a header attribute, echoed in a message). Shared
by the OTLP JSON and protobuf decoders, which hand over attributes as (key, decoded value) pairs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from flakeproxy.proxycore.redact import Redactor
from flakeproxy.proxycore.redact_values import REDACTED, scrub, scrub_nested, searchable, secret_shaped
from flakeproxy.telemetry.spans import AgentSpan, Kind, SpanEvent, Status

MAX_ATTRIBUTES = 128
MAX_EVENTS = 64
MAX_STRING = 4096
MAX_ITEMS = 64  # in an array or key-value list attribute
KINDS: tuple[Kind, ...] = ("unspecified", "internal", "server", "client", "producer", "consumer")
STATUSES: tuple[Status, ...] = ("unset", "ok", "error")
_TOKENS = re.compile(r"[^\s,;\"'()<>=]{16,}")


def capped(value: Any) -> Any:
    """A decoded attribute value within the limits (long strings cut, long lists shortened)."""
    if isinstance(value, str):
        return value if len(value) <= MAX_STRING else value[:MAX_STRING] + f"... ({len(value) - MAX_STRING} more)"
    if isinstance(value, list):
        return [capped(v) for v in value[:MAX_ITEMS]]
    if isinstance(value, dict):
        return {str(k): capped(v) for k, v in list(value.items())[:MAX_ITEMS]}
    return value


def attributes(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Decoded (key, value) pairs as a capped attribute map (the first MAX_ATTRIBUTES)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if len(out) == MAX_ATTRIBUTES:
            break
        out[key] = capped(value)
    return out


def _remember(seen: set[str], value: Any) -> None:
    if isinstance(value, str) and value and value != REDACTED:
        seen.add(value)
        seen.update(part for part in value.split() if len(part) >= 6)  # "Bearer sk-..." hides "sk-..." too
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seen.add(str(value))
    elif isinstance(value, list | dict):
        for v in value.values() if isinstance(value, dict) else value:
            _remember(seen, v)


class _Cleaner:
    def __init__(self, redactor: Redactor) -> None:
        self.redactor, self.seen = redactor, set[str]()

    def value(self, key: str, value: Any) -> Any:
        if self.redactor.secret_field(key) and value not in (None, "") and not isinstance(value, bool):
            _remember(self.seen, value)
            return REDACTED
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(key, v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(k, v) for k, v in value.items()}
        return value

    def text(self, value: str) -> str:
        if secret_shaped(value):
            _remember(self.seen, value.strip())
            return REDACTED
        self.seen.update(t for t in _TOKENS.findall(value) if secret_shaped(t))
        return self.redactor.body(value, seen=self.seen)

    def attributes(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {k: self.value(k, v) for k, v in attrs.items()}


def _scrubbed(span: AgentSpan, values: list[str]) -> AgentSpan:
    events = [e.model_copy(update={"attributes": scrub_nested(e.attributes, values)}) for e in span.events]
    update = {"attributes": scrub_nested(span.attributes, values), "events": events}
    return span.model_copy(update={**update, "status_message": scrub(span.status_message, values)})


def redacted(span: AgentSpan, redactor: Redactor) -> AgentSpan:
    """The span with its secrets replaced by [redacted] (see the module's docstring)."""
    clean = _Cleaner(redactor)
    events = [e.model_copy(update={"attributes": clean.attributes(e.attributes)}) for e in span.events]
    update = {"attributes": clean.attributes(span.attributes), "events": events}
    out = span.model_copy(update={**update, "status_message": clean.text(span.status_message)})
    values = searchable(clean.seen)
    return _scrubbed(out, values) if values else out


def scrub_spans(spans: list[AgentSpan], found: Iterable[str], first: Iterable[str] = ()) -> list[AgentSpan]:
    """The spans with every secret value their episode's requests carried replaced (a key the agent's telemetry
    echoed in a message, say), as the journal's entries scrub each other's; `first` (those of headers and URLs)
    are always among the values searched for."""
    values = searchable(found, first)
    return [_scrubbed(s, values) for s in spans] if values else spans


def hex_id(raw: bytes | str, width: int) -> str | None:
    """An id as lower-case hex of `width` digits, or None when it is empty, malformed or all zeros (no parent)."""
    text = raw.hex() if isinstance(raw, bytes) else raw.strip().lower()
    if len(text) != width or not re.fullmatch(r"[0-9a-f]+", text) or int(text, 16) == 0:
        return None
    return text


def span(
    *,
    trace_id: str,
    span_id: str,
    parent: str | None,
    name: str,
    kind: int,
    start_ns: int,
    end_ns: int,
    attrs: dict[str, Any],
    events: list[SpanEvent],
    status: int,
    message: str,
    service: str | None,
    redactor: Redactor,
) -> AgentSpan:
    """A decoded span, capped and redacted."""
    raw = AgentSpan(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=capped(name)[:512],
        kind=KINDS[kind] if 0 <= kind < len(KINDS) else "unspecified",
        start=start_ns / 1e9,
        end=max(end_ns, start_ns) / 1e9,
        status=STATUSES[status] if 0 <= status < len(STATUSES) else "unset",
        status_message=capped(message),
        attributes=attrs,
        events=events[:MAX_EVENTS],
        service=service,
    )
    return redacted(raw, redactor)
