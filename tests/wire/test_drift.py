"""response_drift drifts an answer once (not each SSE delta), compress really shortens, and mid_stream_error's
default error follows the API."""

from __future__ import annotations

import json
from random import Random
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from flakeproxy.faults import LlmFault
from flakeproxy.wire.call import Call
from flakeproxy.wire.sse import SseParser, format_event

LLM_FAULT: TypeAdapter[Any] = TypeAdapter(LlmFault)
WORDS = ["AAPL ", "trades ", "at ", "$189.50. ", "It ", "rose ", "today."]
ANSWER = "".join(WORDS)


def fault(**fields: Any) -> Any:
    return LLM_FAULT.validate_python(fields)


def call(api: str) -> Call:
    return Call("llm", "POST", "http://x/v1", "/v1", {}, b"{}", ("llm",), api)


def stream_of(api: str, words: list[str]) -> bytes:
    if api == "openai":
        events = [format_event({"choices": [{"index": 0, "delta": {"content": w}}]}) for w in words]
        return b"".join(events) + format_event("[DONE]")
    if api == "anthropic":
        delta = lambda w: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}}  # noqa: E731
        events = [format_event(delta(w), "content_block_delta") for w in words]
        return b"".join(events) + format_event({"type": "message_stop"}, "message_stop")
    kind = "response.output_text.delta"
    events = [format_event({"type": kind, "delta": w}, kind) for w in words]
    done = "response.output_text.done"
    return b"".join(events) + format_event({"type": done, "text": "".join(words)}, done)


def texts(api: str, body: bytes) -> tuple[str, str | None]:
    """The text the deltas add up to, and the full text a done event repeats (Responses)."""
    out, done = "", None
    for event in SseParser().feed(body + b"\n\n"):
        data = event.json()
        if not isinstance(data, dict):
            continue
        if api == "openai":
            out += data["choices"][0]["delta"].get("content") or ""
        elif api == "anthropic" and data.get("type") == "content_block_delta":
            out += data["delta"]["text"]
        elif data.get("type") == "response.output_text.delta":
            out += data["delta"]
        elif data.get("type") == "response.output_text.done":
            done = data["text"]
    return out, done


def drift_stream(api: str, words: list[str], **fields: Any) -> str:
    action = fault(mode="response_drift", **fields).act(call(api), Random(0))
    transform = action.stream()
    body = b"".join(transform.feed(stream_of(api, [w])) for w in words) + transform.finish()
    text, done = texts(api, body)
    assert done in (None, text)  # Responses repeat the drifted text, not the original
    return text


def drift_json(api: str, text: str, **fields: Any) -> str:
    action = fault(mode="response_drift", **fields).act(call(api), Random(0))
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
    out = json.loads(action.rewrite_body(json.dumps(body).encode()))
    return str(out["choices"][0]["message"]["content"])


APIS = ["openai", "openai-responses", "anthropic"]


@pytest.mark.parametrize("api", APIS)
def test_tone_shift_drifts_the_stream_once(api: str) -> None:
    text = drift_stream(api, WORDS, drift_type="tone_shift")
    assert text == "lol " + ANSWER and text.count("lol") == 1


@pytest.mark.parametrize("api", APIS)
def test_format_change_bullets_the_stream_once(api: str) -> None:
    text = drift_stream(api, WORDS, drift_type="format_change")
    assert text == "- AAPL trades at $189.50.\n- It rose today."


@pytest.mark.parametrize("api", APIS)
def test_compress_drops_the_stream_past_its_budget(api: str) -> None:
    text = drift_stream(api, WORDS, drift_type="verbosity_shift", direction="compress", stream_words=3)
    assert text.split() == ["AAPL", "trades", "at"]


@pytest.mark.parametrize("api", APIS)
def test_expand_repeats_each_sentence_once(api: str) -> None:
    text = drift_stream(api, WORDS, drift_type="verbosity_shift", direction="expand", factor=2)
    assert " ".join(text.split()) == "AAPL trades at $189.50. AAPL trades at $189.50. It rose today. It rose today."


def test_json_field_rename_in_a_stream() -> None:
    pieces = ['{"price": ', "189.5, ", '"source": "feed"}']
    assert json.loads(drift_stream("openai", pieces)) == {"price_v2": 189.5, "source_v2": "feed"}


@pytest.mark.parametrize(
    ("fields", "out"),
    [
        ({"drift_type": "tone_shift"}, "lol AAPL trades at $189.50. It rose today."),
        ({"drift_type": "verbosity_shift", "direction": "compress"}, "AAPL trades at"),
        ({"drift_type": "verbosity_shift", "direction": "compress", "factor": 4}, "AAPL"),
        ({"drift_type": "verbosity_shift", "direction": "expand"}, f"{ANSWER} {ANSWER}"),
    ],
)
def test_json_answers_drift_once(fields: dict[str, Any], out: str) -> None:
    assert drift_json("openai", ANSWER, **fields) == out


def test_compress_always_shortens() -> None:
    assert drift_json("openai", "two words", drift_type="verbosity_shift", factor=1.5) == "two"
    with pytest.raises(ValidationError, match="greater than 1"):
        fault(mode="response_drift", drift_type="verbosity_shift", factor=0.5)


def _error_event(api: str, **fields: Any) -> tuple[str | None, Any]:
    action = fault(mode="mid_stream_error", after_events=0, **fields).act(call(api), Random(0))
    event = SseParser().feed(action.stream().feed(b""))[0]
    return event.event, event.json()


def test_mid_stream_error_defaults_follow_the_api() -> None:
    name, data = _error_event("openai")
    assert name is None and data["error"]["type"] == "server_error" and data["error"]["message"]
    name, data = _error_event("openai-responses")
    assert name == "error" and data["type"] == "error" and data["code"] == "server_error"
    name, data = _error_event("anthropic")
    assert name == "error" and data == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def test_mid_stream_error_type_and_message_can_be_chosen() -> None:
    _, data = _error_event("openai", error_type="rate_limit_exceeded", message="slow down")
    assert data["error"]["type"] == "rate_limit_exceeded" and data["error"]["message"] == "slow down"
    _, data = _error_event("anthropic", error_type="api_error")
    assert data["error"]["type"] == "api_error"
