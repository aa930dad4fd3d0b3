"""Server-sent events: an incremental parser that keeps each event's raw bytes, and a formatter."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_BOUNDARY = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def media_type(content_type: str) -> str:
    """The media type of a Content-Type value: lower case, without its parameters ('' when absent)."""
    return content_type.split(";", 1)[0].strip().lower()


def is_event_stream(content_type: str) -> bool:
    """Whether a Content-Type value says server-sent events."""
    return media_type(content_type) == "text/event-stream"


@dataclass(frozen=True)
class SseEvent:
    """One event: its `event:` name (or None), its joined `data:` lines, and the bytes it came as."""

    raw: bytes
    event: str | None
    data: str

    def json(self) -> Any:
        """The data as JSON, or None when it is not JSON (e.g. [DONE], a ping, a comment)."""
        try:
            return json.loads(self.data)
        except ValueError:
            return None


def parse_event(block: bytes) -> SseEvent:
    event: str | None = None
    data: list[str] = []
    for line in block.decode("utf-8", "replace").splitlines():
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    return SseEvent(block, event, "\n".join(data))


def format_event(data: Any, event: str | None = None) -> bytes:
    """An event as bytes; data that is not a str is JSON-encoded."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return (head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n").encode()


class EventSplitter:
    """Feed bytes as they arrive; get back the complete events' raw bytes (each with its blank line).

    Linear in what it is fed, however large one event grows: a search never starts before the last few bytes
    already searched, and the bytes of finished events are dropped once per feed. `held` is how many bytes of
    an unfinished event it holds."""

    def __init__(self, boundary: re.Pattern[bytes] = _BOUNDARY) -> None:
        self._boundary = boundary  # at most 4 bytes long
        self._buffer = bytearray()
        self._searched = 0  # _buffer[:_searched] holds no boundary (a new one may begin in its last 3 bytes)

    @property
    def held(self) -> int:
        return len(self._buffer)

    def feed(self, chunk: bytes) -> list[bytes]:
        self._buffer += chunk
        blocks, start = [], 0
        for m in self._boundary.finditer(self._buffer, max(0, self._searched - 3)):
            blocks.append(bytes(self._buffer[start : m.end()]))
            start = m.end()
        del self._buffer[:start]
        self._searched = len(self._buffer)
        return blocks

    def rest(self) -> bytes:
        """Bytes after the last complete event (an event cut off by the end of the stream)."""
        rest = bytes(self._buffer)
        self._buffer.clear()
        self._searched = 0
        return rest


class SseParser:
    """Feed bytes as they arrive; get back the complete events (raw bytes include the blank line)."""

    def __init__(self) -> None:
        self._split = EventSplitter()

    @property
    def held(self) -> int:
        return self._split.held

    def feed(self, chunk: bytes) -> list[SseEvent]:
        return [parse_event(block) for block in self._split.feed(chunk)]

    def rest(self) -> bytes:
        """Bytes after the last complete event (an event cut off by the end of the stream)."""
        return self._split.rest()
