"""Exchanges built from what the proxy saw (a live recording) or from a results.json journal entry.

Everything that goes into a session passes through the config's Redactor first: secret headers, query
parameters and body fields become `[redacted]`, and a value redacted in one place is scrubbed from all the
others (a bearer token echoed in a body). The request digest is taken of the redacted body, so recording and
replay compute it the same way and no digest is ever taken of a secret.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from flakeproxy.config.replays import Exchange, SseEvent, WsMessage
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.wire.encoding import TooLarge, Undecodable, decode_body
from flakeproxy.wire.record import read_fault
from flakeproxy.wire.sse import EventSplitter, is_event_stream

_EVENT_END = re.compile(rb"\r?\n\r?\n")
#: The most a recorded body is decoded to.
DECODED_LIMIT_BYTES = 64 * 1024 * 1024
#: Response headers a replay sets itself (the body is stored decoded, its framing is the replayer's).
HOP_HEADERS = frozenset(
    {"content-length", "transfer-encoding", "content-encoding", "connection", "keep-alive", "date", "server"}
)


def digest(body: str) -> str:
    return "sha256:" + hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def path_of(url: str) -> str:
    """The part of a URL that matching compares: path and query (the host is the listener's upstream)."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


@dataclass(frozen=True)
class RedactedRequest:
    url: str
    headers: dict[str, str]
    body: str

    @property
    def digest(self) -> str:
        return digest(self.body)


def redact_request(
    redactor: Redactor, url: str, headers: Iterable[tuple[str, str]], body: str, seen: set[str] | None = None
) -> RedactedRequest:
    """A request as a session keeps it (and as replay matching compares it)."""
    seen = set() if seen is None else seen
    kept = redactor.headers(headers, seen)
    clean_url = redactor.url(url, seen)
    text = redactor.body(body, kept.get("content-type", ""), seen)
    return RedactedRequest(redactor.literals(clean_url, seen), dict(kept), text)


def decode(body: bytes, encoding: str | None) -> bytes:
    """A body as the agent's client reads it: gzip, deflate, br or zstd undone, up to DECODED_LIMIT_BYTES
    decoded (a small body may hold gigabytes); past that, or undecodable, as it is."""
    try:
        return decode_body(body, encoding, DECODED_LIMIT_BYTES)
    except (TooLarge, Undecodable):
        return body


def split_events(chunks: Iterable[tuple[bytes, float | None]]) -> list[tuple[bytes, float | None]]:
    """SSE events (each with its blank line) from timed chunks; an event's time is when its end arrived."""
    events: list[tuple[bytes, float | None]] = []
    splitter = EventSplitter(_EVENT_END)  # linear, however large one event is
    at: float | None = None
    for chunk, at in chunks:
        events += [(block, at) for block in splitter.feed(chunk)]
    if rest := splitter.rest():
        events.append((rest, at))
    return events


@dataclass
class RawExchange:
    """One exchange as the proxy saw it, before redaction (the recorder fills it in)."""

    listener: str
    targets: list[str]
    method: str
    url: str
    request_headers: list[tuple[str, str]]
    request_body: bytes
    status: int | None = None
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[tuple[bytes, float | None]] = field(default_factory=list)
    first_byte_ms: float | None = None
    latency_ms: float | None = None
    error: str | None = None
    fault: dict[str, Any] | None = None  # the applied fault's record, when one changed this response
    closed_mid_body: bool = False  # the connection closed before the body ended
    #: a WebSocket: (from the client, ms from the request's arrival, content, is text) as the agent exchanged them
    messages: list[tuple[bool, float, bytes, bool]] | None = None
    close: tuple[int | None, str | None, bool] | None = None  # a WebSocket's close: code, reason, by the client


def recorded_fault(record: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The part of a journal entry's fault a session keeps: which fault, and what it did; None unless applied."""
    fault = read_fault(record)
    if fault is None or not fault.applied:
        return None
    keep = fault.model_dump(include={"scenario", "section", "index", "kind", "effect"})
    return {k: v for k, v in keep.items() if v is not None}


def _is_sse(headers: Mapping[str, str]) -> bool:
    return is_event_stream(headers.get("content-type", ""))


def build_exchange(raw: RawExchange, redactor: Redactor, seen: set[str] | None = None) -> Exchange:
    """The session's exchange: redacted, the body decoded, SSE split into timed events."""
    seen = set() if seen is None else seen
    request = redact_request(redactor, raw.url, raw.request_headers, raw.request_body.decode("utf-8", "replace"), seen)
    response_headers = redactor.headers(raw.response_headers, seen)
    encoding = response_headers.get("content-encoding")
    events: list[SseEvent] | None = None
    body = ""
    if _is_sse(response_headers) and not encoding:
        events = [
            SseEvent(data=_scrub(redactor, data.decode("utf-8", "replace"), seen), at_ms=_ms(at))
            for data, at in split_events(raw.chunks)
        ]
    else:
        whole = decode(b"".join(c for c, _ in raw.chunks), encoding).decode("utf-8", "replace")
        body = redactor.literals(redactor.body(whole, response_headers.get("content-type", ""), seen), seen)
    return Exchange(
        target=raw.targets[0] if raw.targets else None,
        listener=raw.listener,
        method=raw.method,
        url=request.url,
        request_digest=request.digest,
        request_headers=_literals(redactor, request.headers, seen),
        request_body=redactor.literals(request.body, seen),
        status=raw.status,
        response_headers={k: redactor.literals(v, seen) for k, v in response_headers.items() if k not in HOP_HEADERS},
        response_body=body,
        events=events,
        first_byte_ms=_ms(raw.first_byte_ms),
        latency_ms=_ms(raw.latency_ms),
        error=raw.error,
        fault=raw.fault,
        closed_mid_body=raw.closed_mid_body,
        declared_bytes=_declared(raw.closed_mid_body, response_headers),
        **_websocket(raw, redactor, seen),
    )


def _websocket(raw: RawExchange, redactor: Redactor, seen: set[str]) -> dict[str, Any]:
    """A WebSocket's messages (text redacted like a body) and close, as Exchange fields; {} for any other."""
    if raw.messages is None:
        return {}
    messages = [
        WsMessage(sender="client" if mine else "server", at_ms=_ms(at), binary=content.hex())
        if not is_text
        else WsMessage(
            sender="client" if mine else "server",
            at_ms=_ms(at),
            text=redactor.literals(redactor.body(content.decode("utf-8", "replace"), "", seen), seen),
        )
        for mine, at, content, is_text in raw.messages
    ]
    code, reason, by_client = raw.close or (None, None, False)
    return {"messages": messages, "close_code": code, "close_reason": reason, "closed_by_client": by_client}


def _declared(closed: bool, headers: Mapping[str, str]) -> int | None:
    """The Content-Length a body closed early had promised (None for a chunked one, or a complete body)."""
    value = headers.get("content-length", "")
    return int(value) if closed and value.isdigit() else None


def exchange_from_entry(entry: Mapping[str, Any]) -> Exchange:
    """An exchange from a results.json journal entry (already redacted; bodies capped, no event timing)."""
    headers = {str(k): str(v) for k, v in (entry.get("response_headers") or {}).items()}
    body = str(entry.get("response_body") or "")
    events = None
    if _is_sse(headers):
        events = [SseEvent(data=d.decode("utf-8", "replace")) for d, _ in split_events([(body.encode(), None)])]
        body = ""
    request_body = str(entry.get("request_body") or "")
    targets = list(entry.get("targets") or [])
    return Exchange(
        target=targets[0] if targets else None,
        listener=str(entry.get("listener") or "forward"),
        method=str(entry.get("method") or "GET"),
        url=str(entry.get("url") or ""),
        request_digest=digest(request_body),
        request_headers={str(k): str(v) for k, v in (entry.get("request_headers") or {}).items()},
        request_body=request_body,
        status=entry.get("status"),
        response_headers={k: v for k, v in headers.items() if k not in HOP_HEADERS},
        response_body=body,
        events=events,
        latency_ms=entry.get("latency_ms"),
        error=entry.get("error"),
        fault=recorded_fault(entry.get("fault")),
        closed_mid_body=bool(entry.get("closed_mid_body")),
        declared_bytes=_declared(bool(entry.get("closed_mid_body")), headers),
        inexact="its response body was over the journal's 64 KiB cap in results.json and is cut"
        if entry.get("body_truncated")
        else None,
    ).model_copy(update=_ws_from_entry(entry.get("websocket")))


def _ws_from_entry(ws: Any) -> dict[str, Any]:
    """A journaled WebSocket's messages as the agent got them (the dropped left out) and its close; what the
    journal's caps cut makes the exchange inexact."""
    if not isinstance(ws, Mapping):
        return {}
    kept = [m for m in ws.get("messages") or [] if isinstance(m, Mapping) and m.get("fault") != "dropped"]
    messages = [
        WsMessage(sender=m.get("from", "server"), at_ms=m.get("at_ms"), text=m.get("text"), binary=m.get("binary"))
        for m in kept
    ]
    cut = bool(ws.get("messages_truncated")) or any(m.get("truncated") for m in kept)
    return {
        "messages": messages,
        "close_code": ws.get("close_code"),
        "close_reason": ws.get("close_reason"),
        "closed_by_client": ws.get("closed_by") == "client",
        **(
            {"inexact": "its WebSocket messages were over the journal's caps in results.json and are cut"}
            if cut
            else {}
        ),
    }


def _scrub(redactor: Redactor, event: str, seen: set[str]) -> str:
    lines = []
    for line in event.split("\n"):
        name, sep, value = line.partition(":")
        if name == "data" and sep and value.strip()[:1] in ("{", "["):
            cleaned = redactor.body(value.strip(), "application/json", seen)
            line = line if cleaned == value.strip() else f"data: {cleaned}"
        lines.append(line)
    return redactor.literals("\n".join(lines), seen)


def _literals(redactor: Redactor, headers: Mapping[str, str], seen: set[str]) -> dict[str, str]:
    return {k: redactor.literals(v, seen) for k, v in headers.items()}


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
