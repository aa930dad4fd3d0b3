"""Which API an LLM call speaks (flakeproxy.wire.call.resolve): OpenAI's chat completions and Responses share one
base URL, so a target's `api: openai` or `api: openai-responses` is read per call, by where it went (or its body)."""

from __future__ import annotations

import json

import pytest

from flakeproxy.wire.call import TargetSpec, resolve

TARGETS = {
    "openai": TargetSpec("llm", api="openai"),
    "responses": TargetSpec("llm2", api="openai-responses"),
    "claude": TargetSpec("llm3", api="anthropic"),
    "tools": TargetSpec("tools"),
}
CHAT = json.dumps({"model": "m", "messages": [{"role": "user", "content": "input"}]}).encode()
RESPONSES = json.dumps({"model": "m", "input": "What is AAPL trading at?", "stream": True}).encode()


@pytest.mark.parametrize(
    ("listener", "path", "body", "api"),
    [
        ("llm", "/v1/responses", b"", "openai-responses"),  # the Agents SDK's default, on an `api: openai` target
        ("llm", "/openai/v1/responses?api-version=preview", b"", "openai-responses"),  # Azure's
        ("llm", "/v1/chat/completions", RESPONSES, "openai"),  # the path decides before the body
        ("llm2", "/v1/chat/completions", b"", "openai"),
        ("llm2", "/v1/responses/", b"", "openai-responses"),
        ("llm", "/gateway/llm", RESPONSES, "openai-responses"),  # a path that says nothing: the body's keys
        ("llm2", "/gateway/llm", CHAT, "openai"),
        ("llm", "/gateway/llm", b"", "openai"),  # nothing to tell by: the target's api
        ("llm2", "/gateway/llm", b"not json", "openai-responses"),
        ("llm", "/gateway/llm", b'{"messages": [], "input": "x"}', "openai"),  # both keys: the target's
        ("llm3", "/v1/responses", RESPONSES, "anthropic"),  # another provider's target is as it says
        ("tools", "/v1/responses", RESPONSES, None),  # a tool is no LLM call
    ],
)
def test_an_openai_call_is_read_as_the_api_it_was_sent_to(listener: str, path: str, body: bytes, api: str) -> None:
    call = resolve(TARGETS, listener, "POST", f"http://127.0.0.1:1{path}", path, {}, body)
    assert call.api == api
