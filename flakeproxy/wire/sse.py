"""Server-sent events: an incremental parser that keeps each event's raw bytes, and a formatter."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_BOUNDARY = re.compile(rb"\r\n\r\n|\n\n|\r\r")


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


class SseParser:
    """Feed bytes as they arrive; get back the complete events (raw bytes include the blank line)."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[SseEvent]:
        self._buffer += chunk
        events = []
        while m := _BOUNDARY.search(self._buffer):
            block, self._buffer = self._buffer[: m.end()], self._buffer[m.end() :]
            events.append(parse_event(block))
        return events

    def rest(self) -> bytes:
        """Bytes after the last complete event (an event cut off by the end of the stream)."""
        rest, self._buffer = self._buffer, b""
        return rest
