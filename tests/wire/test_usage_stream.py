"""Usage read from SSE answers as they pass: every provider's stream, cut anywhere, split anywhere, in bounded
memory."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from flakeproxy.wire.usage import Usage
from flakeproxy.wire.usage_stream import BoundedEvents, Overflow, UsageReader, tail_object
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
IDS = ["chat", "responses", "anthropic", "anthropic-older-delta", "gemini"]


def read(api: Any, chunks: list[bytes], **kwargs: Any) -> Usage:
    reader = UsageReader(api, **kwargs)
    for chunk in chunks:
        reader.feed(chunk)
    return reader.finish()


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
        ("openai", chat_stream(include_usage=False)[:-1], "the stream was cut before [DONE] and reported no usage"),
        ("openai", chat_stream(include_usage=True)[:-2], "the stream was cut before [DONE] and reported no usage"),
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
