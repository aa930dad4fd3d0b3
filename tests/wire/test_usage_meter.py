"""UsageMeter: the usage of an answer fed in chunks as the agent gets them, compressed or not, however it ended."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest

from flakeproxy.wire.usage_meter import EDGE_BYTES, WHOLE_CAP, Ending, UsageMeter
from tests.support.upstream import anthropic_json, openai_chat_events, openai_chat_json

BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "AAPL?"}]}
STREAM = {**BODY, "stream": True, "stream_options": {"include_usage": True}}


def fed(meter: UsageMeter, data: bytes, encoding: str | None = None, step: int = 7) -> UsageMeter:
    for i in range(0, len(data), step):
        meter.feed(data[i : i + step], encoding)
    return meter


def test_a_json_answer_in_small_chunks() -> None:
    usage = fed(UsageMeter("openai"), json.dumps(openai_chat_json(BODY)).encode()).finish(Ending(200))
    assert (usage.input_tokens, usage.output_tokens, usage.unknown) == (
        openai_chat_json(BODY)["usage"]["prompt_tokens"],
        13,
        False,
    )


def test_an_sse_answer_gzipped_across_chunks() -> None:
    meter = UsageMeter("openai")
    meter.sse = True
    codec = zlib.compressobj(6, zlib.DEFLATED, 31)
    wire = b"".join(codec.compress(e) + codec.flush(zlib.Z_SYNC_FLUSH) for e in openai_chat_events(STREAM))
    usage = fed(meter, wire + codec.flush(), "gzip", step=5).finish(Ending(200))
    assert not usage.unknown and usage.output_tokens == 13


@pytest.mark.parametrize(("encoding", "step"), [("gzip", 64 * 1024), (None, 997)])
def test_a_json_answer_larger_than_held_whole_reads_its_edges(encoding: str | None, step: int) -> None:
    answer = anthropic_json(BODY)
    answer["content"][0]["text"] = "x" * (WHOLE_CAP + EDGE_BYTES)
    data = json.dumps(answer).encode()
    meter = fed(UsageMeter("anthropic"), gzip.compress(data) if encoding else data, encoding, step=step)
    usage = meter.finish(Ending(200))
    assert (usage.input_tokens, usage.output_tokens, usage.model) == (
        answer["usage"]["input_tokens"],
        answer["usage"]["output_tokens"],
        answer["model"],
    )


@pytest.mark.parametrize(
    ("ending", "unknown", "reason"),
    [
        (Ending(429, proxy_made=True), False, "not billed"),
        (Ending(None, proxy_made=True), False, "a closed connection"),
        (Ending(503), False, "not billed"),
        (Ending(None, cut="read timeout"), True, "no answer from the provider: read timeout"),
        (Ending(200, cut="connection reset"), True, "cut: connection reset"),
        (Ending(504, cut="upstream sent no response within 100 ms"), True, "cut"),
    ],
)
def test_how_the_exchange_ended_decides_first(ending: Ending, unknown: bool, reason: str) -> None:
    usage = fed(UsageMeter("openai"), json.dumps(openai_chat_json(BODY)).encode()).finish(ending)
    assert usage.unknown is unknown and reason in (usage.reason or "")
    assert (usage.input_tokens is None) is unknown  # unknown is None, known is 0


def test_an_answer_it_cannot_decode_is_unknown() -> None:
    assert "zstd" in (fed(UsageMeter("openai"), b"\x28\xb5\x2f\xfd", "zstd").finish(Ending(200)).reason or "")
    assert fed(UsageMeter("openai"), b"not gzip at all", "gzip").finish(Ending(200)).unknown
    assert UsageMeter("gemini").finish(Ending(200)).unknown  # no body at all
