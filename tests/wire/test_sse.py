from __future__ import annotations

import pytest

from flakeproxy.wire.sse import SseParser, format_event

STREAM = b'event: a\ndata: {"x": 1}\n\ndata: [DONE]\n\n'


@pytest.mark.parametrize("size", [1, 3, 7, len(STREAM)])
def test_events_survive_any_chunking(size: int) -> None:
    parser = SseParser()
    events = []
    for i in range(0, len(STREAM), size):
        events += parser.feed(STREAM[i : i + size])
    assert [(e.event, e.data) for e in events] == [("a", '{"x": 1}'), (None, "[DONE]")]
    assert b"".join(e.raw for e in events) == STREAM
    assert events[0].json() == {"x": 1} and events[1].json() is None


def test_crlf_and_multiline_data() -> None:
    [event] = SseParser().feed(b"data: one\r\ndata: two\r\n\r\n")
    assert event.data == "one\ntwo"


def test_rest_is_the_unfinished_event() -> None:
    parser = SseParser()
    assert parser.feed(b"data: 1\n\ndata: 2") and parser.rest() == b"data: 2"


def test_format() -> None:
    assert format_event({"a": 1}, "x") == b'event: x\ndata: {"a":1}\n\n'
    assert format_event("[DONE]") == b"data: [DONE]\n\n"
