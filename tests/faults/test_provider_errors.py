"""Error replies in the providers' shapes, with the headers SDKs read (pure: no proxy)."""

from __future__ import annotations

import json
from random import Random

import pytest
from pydantic import TypeAdapter

from flakeproxy.faults import LlmFault
from flakeproxy.wire.call import Call
from flakeproxy.wire.sse import parse_event

FAULTS: TypeAdapter[object] = TypeAdapter(LlmFault)


def reply(api: str, **fault: object) -> tuple[int, dict[str, str], dict[str, object]]:
    action = FAULTS.validate_python(fault).act(Call("llm", "POST", "u", "/", {}, b"", ("t",), api), Random(0))  # type: ignore[attr-defined]
    assert action.reply is not None
    return action.reply.status, action.reply.headers, json.loads(action.reply.body)


def test_openai_rate_limit_has_what_the_provider_sends() -> None:
    status, headers, body = reply("openai", mode="rate_limit", retry_after_s=2)
    assert status == 429 and headers["retry-after"] == "2" and headers["retry-after-ms"] == "2000"
    assert headers["x-request-id"].startswith("req_") and headers["x-ratelimit-remaining-requests"] == "0"
    error = body["error"]
    assert isinstance(error, dict) and error["code"] == "rate_limit_exceeded"
    assert error["message"].startswith("Rate limit reached for") and "(RPM)" in error["message"]


def test_openai_503_has_a_null_code() -> None:
    status, _, body = reply("openai", mode="overloaded")
    assert status == 503 and body["error"] == {
        "message": "The server is overloaded or not ready yet.",
        "type": "server_error",
        "param": None,
        "code": None,
    }


def test_anthropic_errors_carry_the_request_id_in_header_and_body() -> None:
    status, headers, body = reply("anthropic", mode="rate_limit", retry_after_s=1)
    assert status == 429 and body["request_id"] == headers["request-id"]
    assert headers["anthropic-ratelimit-requests-remaining"] == "0" and "retry-after-ms" not in headers


@pytest.mark.parametrize(("value", "header"), [(True, "true"), (False, "false"), (None, None)])
def test_should_retry_header(value: bool | None, header: str | None) -> None:
    for mode in ("error", "rate_limit", "overloaded"):
        _, headers, _ = reply("anthropic", mode=mode, should_retry=value)
        assert headers.get("x-should-retry") == header


def test_context_length_presets() -> None:
    status, _, body = reply("openai", mode="context_length_exceeded")
    assert status == 400 and body["error"]["code"] == "context_length_exceeded"  # type: ignore[index]
    assert body["error"]["param"] == "messages"  # type: ignore[index]
    status, _, body = reply("anthropic", mode="context_length_exceeded", limit_tokens=200000, prompt_tokens=210000)
    assert status == 400 and body["error"] == {  # type: ignore[comparison-overlap]
        "type": "invalid_request_error",
        "message": "prompt is too long: 210000 tokens > 200000 maximum",
    }
    status, _, body = reply("anthropic", mode="request_too_large")
    assert status == 413 and body["error"]["type"] == "request_too_large"  # type: ignore[index]


def test_responses_mid_stream_error_can_be_a_response_failed() -> None:
    fault = FAULTS.validate_python(
        {"mode": "mid_stream_error", "after_events": 1, "responses_event": "response.failed"}
    )
    action = fault.act(Call("llm", "POST", "u", "/", {}, b"", ("t",), "openai-responses"), Random(0))  # type: ignore[attr-defined]
    transform = action.stream()
    out = transform.feed(b'event: response.created\ndata: {"type": "response.created"}\n\n')
    assert transform.done
    last = parse_event(out.split(b"\n\n")[-2] + b"\n\n")
    assert last.event == "response.failed" and last.json()["response"]["error"]["code"] == "server_error"
