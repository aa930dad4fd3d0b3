"""Transforms for SSE responses, fed chunk by chunk as the upstream sends them (never buffered whole)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flakeproxy.wire.providers import LlmProvider, StreamSeen, StreamText, TextFn, ToolFn
from flakeproxy.wire.sse import SseEvent, SseParser, format_event, parse_event
from flakeproxy.wire.text import WordBudget


def unless_same(event: SseEvent, out: bytes) -> bytes:
    """The event as it came when `out` says the same thing (a re-serialization is no change)."""
    return event.raw if _meaning(parse_event(out)) == _meaning(event) else out


def _meaning(event: SseEvent) -> tuple[str | None, Any]:
    data = event.json()
    return event.event, event.data if data is None else data


class EventStream:
    """Parse events as they arrive; subclasses turn each event into output bytes and may end the stream."""

    #: how a stream this ended before its own end ended, as the journal's usage reason says it
    ended_by = "the fault ended the stream early"

    def __init__(self) -> None:
        self.done = False
        self.cut = False  # done before the stream's own end: the rest never reaches the agent
        self.events = 0
        self.consumed = 0
        self._parser = SseParser()

    def feed(self, chunk: bytes) -> bytes:
        out = []
        for event in self._parser.feed(chunk):
            if self.done:
                break
            self.events += 1
            self.consumed += len(event.raw)
            out.append(self.on_event(event))
        return b"".join(out)

    def finish(self) -> bytes:
        rest = self._parser.rest()
        if self.done:
            return b""
        self.consumed += len(rest)
        return rest

    def on_event(self, event: SseEvent) -> bytes:
        raise NotImplementedError


class StreamCut(EventStream):
    """Let after_events events through, then end cleanly: no [DONE], no message_stop. `terminal` tells the
    provider's own last event: a stream that ends there anyway was not cut."""

    def __init__(self, after_events: int, terminal: Callable[[SseEvent], bool] | None = None) -> None:
        super().__init__()
        self.after_events = after_events
        self.terminal = terminal
        self.done = self.cut = after_events == 0

    def on_event(self, event: SseEvent) -> bytes:
        self.done = self.events >= self.after_events
        self.cut = self.done and not (self.terminal is not None and self.terminal(event))
        return event.raw


class MidStreamError(EventStream):
    """Let after_events events through, then send a provider error event and end. `terminal` tells the provider's
    own last event: a stream that ends there anyway gets no error after it (no provider sends one)."""

    def __init__(
        self, after_events: int, error_event: bytes, terminal: Callable[[SseEvent], bool] | None = None
    ) -> None:
        super().__init__()
        self.after_events = after_events
        self.error_event = error_event
        self.terminal = terminal
        self._pending = error_event if after_events == 0 else b""

    def feed(self, chunk: bytes) -> bytes:
        head, self._pending = self._pending, b""
        if head:
            self.done = self.cut = True
            return head
        return super().feed(chunk)

    def on_event(self, event: SseEvent) -> bytes:
        if self.terminal is not None and self.terminal(event):
            self.done = True
            return event.raw
        if self.events >= self.after_events:
            self.done = self.cut = True
            return event.raw + self.error_event
        return event.raw


class MapEvents(EventStream):
    """Rewrite the text deltas and tool-call pieces of each event."""

    def __init__(self, provider: LlmProvider, text: TextFn | None, tool: ToolFn | None) -> None:
        super().__init__()
        self.provider, self.tool = provider, tool
        self.text = StreamText(text) if text is not None else None  # this stream's parts, as their deltas became

    def on_event(self, event: SseEvent) -> bytes:
        return unless_same(event, bytes(self.provider.map_event(event, self.text, self.tool)))


class TruncateStream(EventStream):
    """Let max_words words of text through, then end the way the provider ends a max_tokens answer."""

    ended_by = "truncated_response ended the stream at its word budget, with an end of its own"

    def __init__(self, provider: LlmProvider, max_words: int) -> None:
        super().__init__()
        self.provider = provider
        self.budget = WordBudget(max_words)
        self.seen = StreamSeen(text=StreamText(self._take))
        self._saw_text = False

    def _take(self, text: str) -> str:
        self._saw_text = True
        return self.budget.take(text)

    def on_event(self, event: SseEvent) -> bytes:
        data = event.json()
        if isinstance(data, dict):
            self.seen.last = data
            if self.seen.opened is None and isinstance(data.get("response"), dict):
                self.seen.opened = data["response"]
            if data.get("type") == "response.output_item.added" and isinstance(data.get("item"), dict):
                self.seen.items[data.get("output_index")] = data["item"]
        if self.provider.is_terminal(event):
            self.done = True
            return event.raw
        self._saw_text = False
        out = unless_same(event, bytes(self.provider.map_event(event, self.seen.text, None)))
        if self._saw_text and self.budget.spent:
            self.done = self.cut = True
            return out + b"".join(self.provider.length_tail(self.seen))
        return out


class MapJsonEvents(EventStream):
    """Rewrite each event whose data is JSON (e.g. MCP answers framed as `event: message`)."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        super().__init__()
        self.fn = fn

    def on_event(self, event: SseEvent) -> bytes:
        data = event.json()
        if data is None:
            return event.raw
        return unless_same(event, format_event(self.fn(data), event.event))


class ByteCut(EventStream):
    """Let after_bytes bytes of the stream through (events cut anywhere, even mid-line), then stop."""

    def __init__(self, after_bytes: int) -> None:
        super().__init__()
        self.left = after_bytes
        self.done = self.cut = after_bytes == 0

    def feed(self, chunk: bytes) -> bytes:
        if self.done:
            return b""
        out = chunk[: self.left]
        self.left -= len(out)
        self.consumed += len(out)
        self.events += out.count(b"\n\n")
        self.done = self.cut = self.left <= 0
        return out

    def finish(self) -> bytes:
        return b""
