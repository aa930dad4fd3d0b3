"""Usage read from SSE answers as they pass: every provider's stream, cut anywhere, split anywhere, in bounded
memory."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from flakeproxy.wire.providers import LLM_PROVIDERS
from flakeproxy.wire.streams import TruncateStream
from flakeproxy.wire.usage import Usage
from flakeproxy.wire.usage_stream import BoundedEvents, Overflow, UsageReader, asked_usage, tail_object
from tests.wire.test_usage import ANTHROPIC, CHAT, GEMINI, RESPONSES
from tests.wire.usage_shapes import anthropic_stream, chat_stream, gemini_stream, responses_stream, sse

# api, its stream, the usage it reports, and the index of the event that completes it
STREAMS: list[tuple[Any, list[bytes], Usage, int]] = [
    ("openai", chat_stream(include_usage=True), CHAT, -2),  # the usage chunk, before [DONE]
    ("openai-responses", responses_stream(), RESPONSES, -1),  # response.completed
    ("anthropic", anthropic_stream(), ANTHROPIC, -2),  # message_delta, before message_stop
    ("anthropic", anthropic_stream(delta_repeats_input=False), ANTHROPIC, -2),
    ("gemini", gemini_stream(), GEMINI, -1),  # the chunk with finishReason
]
NO_INCLUDE_USAGE = "the stream reported no usage (stream_options.include_usage was not set)"
ASKED = json.dumps({"model": "m", "stream": True, "stream_options": {"include_usage": True}}).encode()
NOT_ASKED = json.dumps({"model": "m", "stream": True}).encode()
IDS = ["chat", "responses", "anthropic", "anthropic-older-delta", "gemini"]


def read(api: Any, chunks: list[bytes], fault_end: bool = False, request: bytes = NOT_ASKED, **kw: Any) -> Usage:
    reader = UsageReader(api, **kw)
    for chunk in chunks:
        reader.feed(chunk)
    return reader.finish(fault_end, request)


@pytest.mark.parametrize(("api", "events", "expected", "last"), STREAMS, ids=IDS)
def test_each_provider_stream(api: Any, events: list[bytes], expected: Usage, last: int) -> None:
    assert read(api, events) == expected


@pytest.mark.parametrize(("api", "events", "expected", "last"), STREAMS, ids=IDS)
def test_chunk_boundaries_anywhere(api: Any, events: list[bytes], expected: Usage, last: int) -> None:
    """Every split in two, one byte at a time, and seeded random cuts give the same usage."""
    stream = b"".join(events)
    for i in range(len(stream) + 1):
        assert read(api, [stream[:i], stream[i:]]) == expected, f"split at byte {i}"
    assert read(api, [stream[i : i + 1] for i in range(len(stream))]) == expected
    rng = random.Random(25)
    for _ in range(50):
        cuts = sorted(rng.sample(range(1, len(stream)), 8))
        parts = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
        assert read(api, parts) == expected, f"cuts at {cuts}"


@pytest.mark.parametrize(("api", "events", "expected", "last"), STREAMS, ids=IDS)
def test_a_stream_cut_anywhere_before_its_usage_is_unknown(
    api: Any, events: list[bytes], expected: Usage, last: int
) -> None:
    """Cut at every byte: unknown until the event that reports the usage has come whole, exact from then on."""
    stream = b"".join(events)
    complete_at = len(b"".join(events[: len(events) + last + 1]))
    for i in range(len(stream) + 1):
        usage = read(api, [stream[:i]])
        if i >= complete_at:
            assert usage == expected, f"cut at byte {i}"
        else:
            assert usage.unknown and usage.output_tokens is None and usage.reason, f"cut at byte {i}: {usage}"


@pytest.mark.parametrize(
    ("api", "events", "reason"),
    [
        ("openai", chat_stream(include_usage=False), NO_INCLUDE_USAGE),
        ("openai", chat_stream(include_usage=False)[:-1], NO_INCLUDE_USAGE),
        ("openai-responses", responses_stream()[:-1], "the stream was cut before response.completed"),
        ("anthropic", anthropic_stream()[:1], "the stream was cut before message_delta: its output tokens are unknown"),
        ("anthropic", [], "the stream was cut before message_start and reported no usage"),
        ("gemini", gemini_stream()[:-1], "the stream was cut before its last chunk (finishReason)"),
        ("gemini", [sse({"candidates": [{"index": 0}]})], "the stream reported no usageMetadata"),
    ],
)  # fmt: skip
def test_why_a_stream_usage_is_unknown(api: Any, events: list[bytes], reason: str) -> None:
    usage = read(api, events)
    assert usage.unknown and usage.reason == reason


@pytest.mark.parametrize(
    ("request_body", "reason"),
    [
        (ASKED, "the stream was cut before its usage chunk"),
        (b"", "the stream was cut before [DONE] and reported no usage"),  # the request was not read
    ],
)
def test_a_chat_stream_cut_before_its_usage_chunk(request_body: bytes, reason: str) -> None:
    for events in (chat_stream(include_usage=True)[:-2], chat_stream(include_usage=True)[:3]):
        usage = read("openai", events, request=request_body)
        assert usage.unknown and usage.reason == reason


@pytest.mark.parametrize(
    ("request_body", "reason"),
    [
        (NOT_ASKED, NO_INCLUDE_USAGE),
        (json.dumps({"stream_options": {"include_usage": False}}).encode(), NO_INCLUDE_USAGE),
        (ASKED, "the stream ended without the usage chunk the request asked for (stream_options.include_usage)"),
        (b"", "the stream reported no usage (the request was not read: was stream_options.include_usage set?)"),
        (b"not json", "the stream reported no usage (the request was not read: was stream_options.include_usage set?)"),
    ],
    ids=["not-asked", "asked-false", "asked", "not-read", "not-json"],
)
def test_a_chat_stream_without_usage_blames_include_usage_only_when_the_request_did_not_set_it(
    request_body: bytes, reason: str
) -> None:
    usage = read("openai", chat_stream(include_usage=False), request=request_body)
    assert usage.unknown and usage.reason == reason


def truncated(api: Any, events: list[bytes], max_words: int = 2) -> list[bytes]:
    """What the agent gets when truncated_response ends the stream the way the provider ends a max_tokens answer."""
    cut = TruncateStream(LLM_PROVIDERS[api], max_words)
    out = [cut.feed(e) for e in events]
    assert cut.done and cut.cut
    return out


@pytest.mark.parametrize(
    ("api", "events", "request_body", "reason"),
    [
        ("openai", chat_stream(include_usage=True), ASKED, "the stream was cut before its usage chunk"),
        ("openai", chat_stream(include_usage=False), NOT_ASKED, NO_INCLUDE_USAGE),
        (
            "anthropic",
            anthropic_stream(),
            b"",
            "the stream was cut before message_delta: its output tokens are unknown",
        ),
        ("openai-responses", responses_stream(), b"", "the stream was cut before response.completed"),
        ("gemini", gemini_stream(), b"", "the stream was cut before its last chunk (finishReason)"),
    ],
    ids=["chat-asked", "chat-not-asked", "anthropic", "responses", "gemini"],
)
def test_the_end_a_fault_made_reports_no_usage(api: Any, events: list[bytes], request_body: bytes, reason: str) -> None:
    """truncated_response ends the stream as the provider would ([DONE], message_delta + message_stop, ...) but
    cannot know the usage: what it sent says none (Anthropic's message_delta must hold an output count for the SDK,
    which is not read), and a [DONE] after a cut is no reason to blame the request."""
    agent_got = truncated(api, events)
    usage = read(api, agent_got, fault_end=True, request=request_body)
    assert usage.unknown and usage.output_tokens is None and usage.reason == reason, usage
    assert UsageReader(api).complete is False
    reader = UsageReader(api)
    reader.feed(b"".join(agent_got))
    assert reader.complete  # the agent got an end: it had all of what it was sent


@pytest.mark.parametrize(("api", "events", "expected", "last"), STREAMS, ids=IDS)
def test_a_stream_is_complete_once_its_own_end_passed(
    api: Any, events: list[bytes], expected: Usage, last: int
) -> None:
    reader = UsageReader(api)
    for event in events:
        assert not reader.complete
        reader.feed(event)
    assert reader.complete


@pytest.mark.parametrize(
    ("body", "asked"),
    [(ASKED, True), (NOT_ASKED, False), (b"", None), (b"[1]", None), (b'{"stream_options": null}', False)],
)
def test_asked_usage(body: bytes, asked: bool | None) -> None:
    assert asked_usage(body) is asked


def test_a_cut_stream_keeps_the_counts_it_saw() -> None:
    """Anthropic's message_start and Gemini's early chunks give the input; the output stays unknown."""
    cut = read("anthropic", anthropic_stream()[:4])
    assert (cut.input_tokens, cut.cached_tokens, cut.cache_write_tokens, cut.output_tokens) == (2257, 2048, 188, None)
    assert read("gemini", gemini_stream()[:2]).input_tokens == 1043


def test_a_failed_or_incomplete_response_reports_its_usage() -> None:
    events = responses_stream()
    incomplete = json.loads(events[-1].split(b"data: ", 1)[1])
    incomplete["type"] = incomplete["response"]["status"] = "response.incomplete"
    assert read("openai-responses", [*events[:-1], sse(incomplete, "response.incomplete")]) == RESPONSES
    failed = {**incomplete, "type": "response.failed", "response": {**incomplete["response"], "usage": None}}
    usage = read("openai-responses", [*events[:-1], sse(failed, "response.failed")])
    assert usage.unknown and usage.reason == "response.failed reported no usage"


def test_per_chunk_usage_is_final_only_on_the_last_chunk() -> None:
    """Servers that report a running count on every chunk: a cut leaves it unknown, not the partial count."""
    chunks = [json.loads(e.split(b"data: ", 1)[1]) for e in chat_stream(include_usage=True)[:-1]]
    running = [sse({**c, "usage": {"prompt_tokens": 2066, "completion_tokens": i}}) for i, c in enumerate(chunks[:-1])]
    usage = read("openai", running)
    assert usage.unknown and usage.reason == "the stream was cut before its final usage chunk"
    assert usage.input_tokens == 2066
    made_end = read("openai", [*running, sse("[DONE]")], fault_end=True)  # a [DONE] after a cut is the fault's
    assert made_end.unknown and made_end.reason == "the stream was cut before its final usage chunk"


@pytest.mark.parametrize(("api", "events", "expected"), [
    ("openai-responses", responses_stream("word " * 4000), RESPONSES),
    ("gemini", [sse({**json.loads(gemini_stream()[-1].split(b"data: ", 1)[1]), "candidates": [
        {"content": {"parts": [{"text": "word " * 4000}]}, "finishReason": "STOP", "index": 0}]})], GEMINI),
])  # fmt: skip
def test_an_event_longer_than_the_cap_still_gives_its_usage_in_bounded_memory(
    api: Any, events: list[bytes], expected: Usage
) -> None:
    """A response.completed (or a Gemini chunk) that repeats a 20 kB answer, read with a 4 kB cap: the reader
    keeps the event's first and last 1 kB and finds the usage and the model there."""
    reader = UsageReader(api, cap=4096, edge=1024)
    stream, held = b"".join(events), 0
    assert len(max(events, key=len)) > 20_000
    for i in range(0, len(stream), 100):
        reader.feed(stream[i : i + 100])
        held = max(held, reader.held)
    assert held <= 4096 + 100 + 1024
    assert reader.finish() == expected


def test_bounded_events_keep_the_ends_of_a_long_event() -> None:
    split = BoundedEvents(cap=64, edge=16)
    long = b"data: " + b"a" * 100 + b"z\n\n"
    out = split.feed(b"data: 1\n\n" + long[:50]) + split.feed(long[50:90])
    assert split.held == 16 + 16  # the first and the last 16 bytes of the event so far
    out += split.feed(long[90:] + b"data: 2\n\n")
    assert out[0] == b"data: 1\n\n" and out[2] == b"data: 2\n\n"
    assert isinstance(out[1], Overflow) and out[1].head == "data: aaaaaaaaaa" and out[1].tail.endswith("az\n\n")


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('..."usage":{"input_tokens":3,"output_tokens":4},"user":null}}', {"input_tokens": 3, "output_tokens": 4}),
        ('"usage": {"a": 1}, "x": {"usage": {"b": {"c": 2}}}', {"b": {"c": 2}}),  # the last one
        ('put_tokens":3},"usage":null}', None),
        ('"text": "the \\"usage\\": {} key"', None),  # inside a string: not a key
        ('"usage":{"input_tokens":3,', None),  # cut
    ],
)
def test_tail_object(text: str, found: dict[str, Any] | None) -> None:
    assert tail_object(text, "usage") == found
