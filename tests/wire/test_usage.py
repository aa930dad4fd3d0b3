"""Usage read from whole answers: each provider's JSON, one meaning for every count, unknown never 0."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from flakeproxy.wire.usage import Usage, read_body, unknown
from tests.wire.usage_shapes import ANTHROPIC_JSON, CHAT_JSON, GEMINI_JSON, responses_json

CHAT = Usage(input_tokens=2066, output_tokens=310, cached_tokens=1920, reasoning_tokens=256, model="o4-mini-2025-04-16")
RESPONSES = Usage(input_tokens=328, output_tokens=52, cached_tokens=128, reasoning_tokens=0, model="gpt-4.1-2025-04-14")
# Anthropic's input_tokens leaves out the cache: 21 + 188 written + 2048 read
ANTHROPIC = Usage(
    input_tokens=2257,
    output_tokens=393,
    cached_tokens=2048,
    cache_write_tokens=188,
    reasoning_tokens=120,
    model="claude-sonnet-4-6",
)
# Gemini's thoughts are output outside candidatesTokenCount: 14 + 520
GEMINI = Usage(input_tokens=1043, output_tokens=534, cached_tokens=1024, reasoning_tokens=520, model="gemini-2.5-flash")


@pytest.mark.parametrize(
    ("api", "body", "expected"),
    [
        ("openai", CHAT_JSON, CHAT),
        ("openai-responses", responses_json(), RESPONSES),
        ("anthropic", ANTHROPIC_JSON, ANTHROPIC),
        ("gemini", GEMINI_JSON, GEMINI),
        # the API's JSON omits counts that are 0: a Gemini answer with no candidates (a blocked prompt)
        (
            "gemini",
            {"usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7}},
            Usage(input_tokens=7, output_tokens=0, cached_tokens=0, reasoning_tokens=0),
        ),
        # streamGenerateContent without alt=sse: a JSON array of chunks; the last count is the final one
        (
            "gemini",
            [{**GEMINI_JSON, "candidates": [], "usageMetadata": {"promptTokenCount": 1043}}, GEMINI_JSON],
            GEMINI,
        ),
        # a minimal chat usage (no details): the parts it does not report stay unknown (None), not 0
        (
            "openai",
            {"usage": {"prompt_tokens": 5, "completion_tokens": 15, "total_tokens": 20}},
            Usage(input_tokens=5, output_tokens=15),
        ),
        ("anthropic", {"usage": {"input_tokens": 5, "output_tokens": 15}}, Usage(input_tokens=5, output_tokens=15)),
    ],
)
def test_each_provider_answer(api: Any, body: Any, expected: Usage) -> None:
    assert read_body(api, json.dumps(body)) == expected
    assert read_body(api, json.dumps(body).encode()) == expected


@pytest.mark.parametrize(
    ("api", "body", "reason"),
    [
        ("openai", {**CHAT_JSON, "usage": None}, "the answer reports no usage"),
        ("openai", {k: v for k, v in CHAT_JSON.items() if k != "usage"}, "the answer reports no usage"),
        ("openai", {"usage": {"total_tokens": 20}}, "usage without prompt_tokens and completion_tokens"),
        ("openai-responses", {**responses_json(), "usage": None}, "the answer reports no usage"),
        ("anthropic", {"usage": {"output_tokens": 3}}, "usage without input_tokens and output_tokens"),
        ("gemini", {k: v for k, v in GEMINI_JSON.items() if k != "usageMetadata"}, "the answer has no usageMetadata"),
        ("gemini", [{**GEMINI_JSON, "candidates": [{"index": 0}]}], "no usageMetadata at the end of the answer"),
        ("openai", [1, 2], "the answer is not a JSON object"),
    ],
)
def test_an_answer_without_usage_is_unknown_never_zero(api: Any, body: Any, reason: str) -> None:
    usage = read_body(api, json.dumps(body))
    assert usage.unknown and usage.reason == reason
    assert usage.total_tokens is None


def test_a_body_cut_mid_json_is_unknown() -> None:
    text = json.dumps(CHAT_JSON)
    usage = read_body("openai", text[: len(text) // 2])
    assert usage == unknown("the answer is not JSON (cut or garbled)")


@pytest.mark.parametrize("status", [400, 429, 500, 529])
def test_an_error_reply_is_not_billed(status: int) -> None:
    body = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    usage = read_body("anthropic", body, status)
    assert (usage.unknown, usage.input_tokens, usage.output_tokens) == (False, 0, 0)
    assert usage.reason == f"HTTP {status}: an error reply is not billed"


def test_the_model_keeps_its_invariants_and_round_trips_as_json() -> None:
    with pytest.raises(ValidationError, match="unknown usage needs a reason"):
        Usage(unknown=True)
    with pytest.raises(ValidationError, match="known usage needs input_tokens and output_tokens"):
        Usage(input_tokens=3)
    with pytest.raises(ValidationError, match="extra"):
        Usage.model_validate({"input_tokens": 1, "output_tokens": 1, "prompt_tokens": 1})
    assert Usage.model_validate(json.loads(json.dumps(ANTHROPIC.to_json()))) == ANTHROPIC
    assert ANTHROPIC.total_tokens == 2257 + 393
