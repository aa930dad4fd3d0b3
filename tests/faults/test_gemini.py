"""api: gemini: Google's error statuses and answer shapes (pure: no proxy)."""

from __future__ import annotations

import json
from random import Random

import pytest
from pydantic import TypeAdapter

from flakeproxy.faults import LlmFault
from flakeproxy.wire.call import Call
from flakeproxy.wire.gemini import Gemini
from flakeproxy.wire.sse import format_event
from flakeproxy.wire.streams import TruncateStream

FAULTS: TypeAdapter[object] = TypeAdapter(LlmFault)
CALL = Call("llm", "POST", "u", "/v1beta/models/g:generateContent", {}, b"", ("g",), "gemini")


def act(**fault: object) -> object:
    return FAULTS.validate_python(fault).act(CALL, Random(0))  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("fault", "status", "name"),
    [
        ({"mode": "rate_limit", "retry_after_s": 2}, 429, "RESOURCE_EXHAUSTED"),
        ({"mode": "overloaded"}, 503, "UNAVAILABLE"),
        ({"mode": "error", "error_code": 500}, 500, "INTERNAL"),
        ({"mode": "context_length_exceeded"}, 400, "INVALID_ARGUMENT"),
    ],
)
def test_errors_are_google_rpc_statuses(fault: dict[str, object], status: int, name: str) -> None:
    reply = act(**fault).reply  # type: ignore[attr-defined]
    error = json.loads(reply.body)["error"]
    assert (reply.status, error["code"], error["status"]) == (status, status, name)
    assert "retry-after" not in reply.headers  # Google puts the wait in the body's RetryInfo
    if status == 429:
        assert error["details"][0]["retryDelay"] == "2s"


def test_truncation_ends_with_max_tokens() -> None:
    chunk = {"candidates": [{"content": {"parts": [{"text": "one two three"}], "role": "model"}, "index": 0}]}
    t = TruncateStream(Gemini(), 2)
    out = t.feed(format_event(chunk))
    assert t.done and b'"text":"one two"' in out and b'"finishReason":"MAX_TOKENS"' in out
    whole = Gemini().map_json({**chunk}, lambda s: s[:3], None, finish="length")
    assert whole["candidates"][0]["finishReason"] == "MAX_TOKENS"


def test_mid_stream_error_is_an_error_object_event() -> None:
    event = Gemini().stream_error()
    assert json.loads(event.decode().removeprefix("data: "))["error"]["status"] == "INTERNAL"
