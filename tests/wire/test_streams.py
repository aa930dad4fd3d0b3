from __future__ import annotations

import json

from flakeproxy.wire.providers import Anthropic, OpenAIChat
from flakeproxy.wire.sse import format_event
from flakeproxy.wire.streams import MapEvents, MidStreamError, StreamCut, TruncateStream


def chat(*words: str) -> bytes:
    events = [format_event({"choices": [{"delta": {"content": w}, "finish_reason": None}]}) for w in words]
    events.append(format_event({"choices": [{"delta": {}, "finish_reason": "stop"}]}))
    return b"".join(events) + format_event("[DONE]")


def text_of(body: bytes) -> str:
    out = ""
    for block in body.split(b"\n\n"):
        if block.startswith(b"data: {"):
            for choice in json.loads(block[6:])["choices"]:
                out += choice["delta"].get("content") or ""
    return out


def test_stream_cut_keeps_n_events_then_is_done() -> None:
    cut = StreamCut(2)
    out = cut.feed(chat("a ", "b ", "c"))
    assert cut.done and text_of(out) == "a b " and b"[DONE]" not in out
    assert cut.feed(b"data: more\n\n") == b"" and cut.finish() == b""


def test_stream_cut_zero_is_done_before_anything() -> None:
    assert StreamCut(0).done


def test_mid_stream_error_follows_the_nth_event() -> None:
    err = OpenAIChat().stream_error("boom", "server_error")
    m = MidStreamError(1, err)
    out = m.feed(chat("a ", "b"))
    assert m.done and out.endswith(err) and text_of(out[: -len(err)]) == "a "


def test_truncate_stream_ends_like_the_provider() -> None:
    t = TruncateStream(OpenAIChat(), 2)
    out = t.feed(chat("one ", "two ", "three"))
    assert t.done and text_of(out) == "one two"  # ends at the last word, as the JSON path does
    assert b'"finish_reason":"length"' in out and out.endswith(b"data: [DONE]\n\n")


def test_truncate_stream_anthropic_tail() -> None:
    body = format_event(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a b c"}},
        "content_block_delta",
    )
    t = TruncateStream(Anthropic(), 1)
    out = t.feed(body)
    assert b'"text":"a"' in out and b'"stop_reason":"max_tokens"' in out
    assert out.endswith(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')


def test_map_events_leaves_other_events_byte_identical() -> None:
    body = b": comment\n\n" + chat("x")
    out = MapEvents(OpenAIChat(), str.upper, None).feed(body)
    assert out.startswith(b": comment\n\n") and text_of(out) == "X" and out.endswith(b"data: [DONE]\n\n")


def test_partial_event_waits_for_its_end() -> None:
    t = StreamCut(5)
    assert t.feed(b"data: x") == b""
    assert t.feed(b"\n\n") == b"data: x\n\n"
    assert t.finish() == b""


def pretty_tool_call() -> bytes:
    """A tool-call-only answer as servers write it: JSON with spaces after ':' and ','."""
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_quote", "arguments": ""}}
    deltas = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    deltas += [{"tool_calls": [{"index": 0, "function": {"arguments": p}}]} for p in ('{"symbol": ', '"AAPL"}')]
    chunks = [{"id": "chatcmpl-1", "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def test_truncate_stream_passes_an_answer_with_no_text_as_it_came() -> None:
    """Nothing to cut: each event goes out as its bytes came, not re-serialised (that would read as a change)."""
    body = pretty_tool_call()
    t = TruncateStream(OpenAIChat(), 1)
    assert t.feed(body) == body
    assert t.done and not t.cut  # ended at the stream's own [DONE]


def test_mid_stream_error_counting_to_the_end_sends_no_error_after_it() -> None:
    body = chat("a ", "b")
    err = OpenAIChat().stream_error()
    at_end = MidStreamError(4, err, OpenAIChat().is_terminal)  # two words, the finish chunk, [DONE]
    assert at_end.feed(body) == body and at_end.done and not at_end.cut
    before = MidStreamError(3, err, OpenAIChat().is_terminal)
    assert before.feed(body).endswith(err) and before.cut
