"""Usage read from an SSE answer as it passes, chunk by chunk: linear in the stream, in bounded memory.

`UsageReader(api)`: `feed(chunk)` for every chunk the agent receives, `finish()` at the end. It keeps only what
the usage needs (the provider's last usage object, a flag or two), and of any one event at most EVENT_CAP bytes:
of a longer one (a `response.completed` that repeats a long answer, a huge Gemini chunk) it keeps the first and
the last EDGE_BYTES, which hold the event's type and its usage (the providers put usage after the content).
Which events carry usage, and what each count means: flakeproxy.wire.usage.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from flakeproxy.wire.sse import SseEvent, parse_event
from flakeproxy.wire.usage import (
    Api,
    Usage,
    anthropic,
    gemini,
    gemini_finished,
    openai_chat,
    openai_responses,
    unknown,
)

EVENT_CAP = 256 * 1024
EDGE_BYTES = 16 * 1024
_BOUNDARY = re.compile(rb"\r\n\r\n|\n\n|\r\r")  # the event boundaries of flakeproxy.wire.sse


@dataclass(frozen=True)
class Overflow:
    """An event longer than EVENT_CAP: its first and last EDGE_BYTES."""

    head: str
    tail: str


class BoundedEvents:
    """Split a stream into events like flakeproxy.wire.sse.EventSplitter, holding at most `cap` bytes of one."""

    def __init__(self, cap: int = EVENT_CAP, edge: int = EDGE_BYTES) -> None:
        self._cap, self._edge = cap, edge
        self._buffer = bytearray()
        self._searched = 0  # _buffer[:_searched] holds no boundary (one may begin in its last 3 bytes)
        self._head: bytes | None = None  # the start of the event being skipped, when it is too long

    @property
    def held(self) -> int:
        return len(self._buffer) + len(self._head or b"")

    def feed(self, chunk: bytes) -> list[bytes | Overflow]:
        self._buffer += chunk
        out: list[bytes | Overflow] = []
        start = 0
        for m in _BOUNDARY.finditer(self._buffer, max(0, self._searched - 3)):
            block = bytes(self._buffer[start : m.end()])
            out.append(block if self._head is None else Overflow(_text(self._head), _text(block)))
            self._head, start = None, m.end()
        del self._buffer[:start]
        if len(self._buffer) > self._cap:
            if self._head is None:
                self._head = bytes(self._buffer[: self._edge])
            del self._buffer[: len(self._buffer) - self._edge]
        self._searched = len(self._buffer)
        return out


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def tail_object(text: str, key: str) -> dict[str, Any] | None:
    """The JSON object of the last `"key": {...}` in text (a piece of a longer JSON document), if it is whole."""
    for m in reversed(list(re.finditer(rf'"{re.escape(key)}"\s*:\s*(?={{)', text))):
        try:
            value, _ = json.JSONDecoder().raw_decode(text, m.end())
        except ValueError:
            continue
        return value if isinstance(value, dict) else None
    return None


def first_string(text: str, key: str) -> str | None:
    """The string value of the first `"key": "..."` in text (a piece of a longer JSON document)."""
    m = re.search(rf'"{re.escape(key)}"\s*:\s*"([^"\\]+)"', text)
    return m.group(1) if m else None


def _json(event: SseEvent) -> dict[str, Any]:
    data = event.json()
    return data if isinstance(data, dict) else {}


def asked_usage(request: bytes) -> bool | None:
    """Whether an OpenAI chat request set stream_options.include_usage (None: its body was not read, or is not a
    JSON object)."""
    try:
        body = json.loads(request) if request else None
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


class _State:
    """What one provider's stream says about usage, kept as it goes.

    `finish(fault_end, request)`: `fault_end` says a fault ended the stream early. One that ends it the way the
    provider does (truncated_response) makes that end itself, so the end events the agent got are the fault's,
    and the usage in them, if any, is not the provider's: the fault cannot know the true count, so the usage is
    unknown (docs/cost.md). `request` is the request's body (b"" when it was not read)."""

    markers: tuple[bytes, ...] = ()  # an event without any of these says nothing about usage

    @property
    def complete(self) -> bool:
        """The stream's own end passed ([DONE], message_stop, ...): the agent had all of the answer."""
        raise NotImplementedError

    def wants(self, block: bytes) -> bool:
        return any(m in block for m in self.markers)

    def on_event(self, event: SseEvent) -> None:
        raise NotImplementedError

    def on_overflow(self, event: Overflow) -> None:
        """A long event (the providers' usage-bearing events are short, except the ones overridden)."""

    def finish(self, fault_end: bool, request: bytes) -> Usage:
        raise NotImplementedError


class OpenAIChatUsage(_State):
    """The usage chunk (`choices: []`) that include_usage adds before [DONE]."""

    markers = (b"[DONE]", b'"usage"')

    def __init__(self) -> None:
        self.usage: Any = None
        self.final = self.done = False
        self.model: str | None = None

    def on_event(self, event: SseEvent) -> None:
        if event.data.strip() == "[DONE]":
            self.done = True
            return
        data = _json(event)
        if data.get("usage"):  # servers that report usage on every chunk too: the last one counts
            self.usage, self.final, self.model = data["usage"], data.get("choices") == [], data.get("model")

    @property
    def complete(self) -> bool:
        return self.done

    def finish(self, fault_end: bool, request: bytes) -> Usage:
        done = self.done and not fault_end  # a [DONE] the fault sent is not the provider's
        if self.usage and (self.final or done):
            return openai_chat(self.usage, self.model)
        if self.usage:
            seen = openai_chat(self.usage, self.model)
            return unknown("the stream was cut before its final usage chunk", input_tokens=seen.input_tokens)
        asked = asked_usage(request)
        if asked is False:
            return unknown("the stream reported no usage (stream_options.include_usage was not set)")
        if not done:
            return unknown(
                "the stream was cut before its usage chunk"
                if asked
                else "the stream was cut before [DONE] and reported no usage"
            )
        if asked:
            return unknown(
                "the stream ended without the usage chunk the request asked for (stream_options.include_usage)"
            )
        return unknown("the stream reported no usage (the request was not read: was stream_options.include_usage set?)")


class ResponsesUsage(_State):
    """The `response.usage` of the event that ends the response."""

    TERMINAL = ("response.completed", "response.incomplete", "response.failed")
    markers = tuple(t.encode() for t in TERMINAL)

    def __init__(self) -> None:
        self.usage: Any = None
        self.ended: str | None = None
        self.model: str | None = None

    def on_event(self, event: SseEvent) -> None:
        data = _json(event)
        kind = data.get("type") or event.event
        if kind in self.TERMINAL:
            response = data.get("response")
            response = response if isinstance(response, dict) else {}
            self.ended, self.usage, self.model = kind, response.get("usage"), response.get("model")

    def on_overflow(self, event: Overflow) -> None:
        kind = first_string(event.head, "type")
        if kind in self.TERMINAL:
            self.ended, self.usage = kind, tail_object(event.tail, "usage")
            self.model = first_string(event.head, "model")  # before the output, unless the instructions are long

    @property
    def complete(self) -> bool:
        return self.ended is not None

    def finish(self, fault_end: bool, request: bytes) -> Usage:
        if self.usage and not fault_end:
            return openai_responses(self.usage, self.model)
        if self.ended and not fault_end:
            return unknown(f"{self.ended} reported no usage")
        return unknown("the stream was cut before response.completed")


class AnthropicUsage(_State):
    """message_start's usage (input and cache counts), overwritten by message_delta's cumulative counts."""

    markers = (b"message_start", b"message_delta", b"message_stop")

    def __init__(self) -> None:
        self.usage: dict[str, Any] = {}
        self.started = self.delta = self.stopped = False
        self.model: str | None = None

    def on_event(self, event: SseEvent) -> None:
        data = _json(event)
        if data.get("type") == "message_start" and isinstance(data.get("message"), dict):
            message = data["message"]
            self.started, self.model = True, message.get("model")
            self.usage = dict(message.get("usage") or {})
        elif data.get("type") == "message_delta" and isinstance(data.get("usage"), dict):
            self.delta = True
            self.usage.update({k: v for k, v in data["usage"].items() if v is not None})
        elif data.get("type") == "message_stop":
            self.stopped = True

    @property
    def complete(self) -> bool:
        return self.stopped

    def finish(self, fault_end: bool, request: bytes) -> Usage:
        made = fault_end and self.stopped  # the fault's message_delta and message_stop: its output count is made up
        if self.delta and not made:
            return anthropic(self.usage, self.model)
        if not self.started:
            return unknown("the stream was cut before message_start and reported no usage")
        seen = anthropic(self.usage, self.model)  # a fault's message_delta changes only the output count
        return unknown(
            "the stream was cut before message_delta: its output tokens are unknown",
            input_tokens=seen.input_tokens,
            cached_tokens=seen.cached_tokens,
            cache_write_tokens=seen.cache_write_tokens,
            model=self.model,
        )


class GeminiUsage(_State):
    """The usageMetadata at or after the chunk with finishReason (every chunk may carry a count so far)."""

    markers = (b"usageMetadata", b"finishReason")

    def __init__(self) -> None:
        self.finished = False
        self.last: dict[str, Any] | None = None  # the latest count, final or not
        self.final: dict[str, Any] | None = None
        self.model: str | None = None

    def _chunk(self, finished: bool, meta: Any, model: Any) -> None:
        self.finished = self.finished or finished
        if isinstance(meta, dict) and meta:
            self.last, self.model = meta, model if isinstance(model, str) else self.model
            self.final = meta if self.finished else None

    def on_event(self, event: SseEvent) -> None:
        data = _json(event)
        self._chunk(gemini_finished(data), data.get("usageMetadata"), data.get("modelVersion"))

    def on_overflow(self, event: Overflow) -> None:
        finished = re.search(r'"finishReason"\s*:\s*"', event.head + event.tail) is not None
        self._chunk(finished, tail_object(event.tail, "usageMetadata"), first_string(event.tail, "modelVersion"))

    @property
    def complete(self) -> bool:
        return self.finished

    def finish(self, fault_end: bool, request: bytes) -> Usage:
        if self.final is not None:  # a fault's last chunk carries no usageMetadata: this one is the provider's
            return gemini(self.final, self.model)
        if self.last is None:
            return unknown("the stream reported no usageMetadata")
        seen = gemini(self.last, self.model)
        return unknown("the stream was cut before its last chunk (finishReason)", input_tokens=seen.input_tokens)


STATES: dict[str, type[_State]] = {
    "openai": OpenAIChatUsage,
    "openai-responses": ResponsesUsage,
    "anthropic": AnthropicUsage,
    "gemini": GeminiUsage,
}


class UsageReader:
    """Feed an SSE answer's bytes as the agent receives them; finish() gives the call's usage. An event cut off
    by the end of the stream is not read (a client never dispatches it either)."""

    def __init__(self, api: Api, cap: int = EVENT_CAP, edge: int = EDGE_BYTES) -> None:
        self._events = BoundedEvents(cap, edge)
        self._state = STATES[api]()

    @property
    def held(self) -> int:
        """Bytes held for the event under way."""
        return self._events.held

    def feed(self, chunk: bytes) -> None:
        for item in self._events.feed(chunk):
            if isinstance(item, Overflow):
                self._state.on_overflow(item)
            elif self._state.wants(item):
                self._state.on_event(parse_event(item))

    @property
    def complete(self) -> bool:
        """The stream's own end passed: the agent had all of the answer."""
        return self._state.complete

    def finish(self, fault_end: bool = False, request: bytes = b"") -> Usage:
        """The call's usage; `fault_end`: a fault ended the stream early (its end events, if any, are the fault's),
        `request`: the request's body (b"": not read), which tells whether an OpenAI chat request asked for usage."""
        return self._state.finish(fault_end, request)
