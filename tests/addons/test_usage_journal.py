"""The proxy records each LLM call's usage on its journal entry (issue 25), read from the answer as it passes:
the official SDKs call fake providers that report usage in their real shapes, through the real proxy; the entry's
counts are the ones the fake computed from the request it got, and the ones the SDK itself parsed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

openai = pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")
anthropic = pytest.importorskip("anthropic", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")
genai = pytest.importorskip("google.genai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

from google.genai import types  # noqa: E402

from tests.fidelity.real_upstream import RealUpstream, RunningRealUpstream  # noqa: E402
from tests.support.fake_usage import ANSWER_TOKENS, completion_tokens, prompt_tokens  # noqa: E402
from tests.support.proxy import Proxy, config_for, running_proxy  # noqa: E402
from tests.support.upstream import ANSWER, RunningUpstream  # noqa: E402

TARGETS = {
    "chat": {"listener": "llm", "path": "/v1/chat/completions", "api": "openai"},
    "responses": {"listener": "llm", "path": "/v1/responses", "api": "openai-responses"},
    "claude": {"listener": "llm", "path": "/v1/messages", "api": "anthropic"},
    "gemini": {"listener": "llm", "path": "/v1*/models/*", "api": "gemini"},
    "quotes": {"listener": "tools", "path": "/v1/quotes"},
}
MESSAGES: Any = [{"role": "user", "content": "What is AAPL trading at?"}]


@pytest.fixture(scope="module", params=[0.0, 0.02], ids=["pace-0", "pace-20ms"])
def world(request: pytest.FixtureRequest) -> Iterator[tuple[RealUpstream, Proxy]]:
    """At once, and at a real token pace (20 ms between events: each event its own read of the stream)."""
    with (
        RunningRealUpstream(event_gap_s=request.param) as up,
        RunningUpstream() as tools,
        running_proxy(config_for({"llm": up.url, "tools": tools.url}, TARGETS)) as proxy,
    ):
        yield up, proxy


def episode(proxy: Proxy, **faults: Any) -> str:
    proxy.control.ok("POST", "/reset")
    proxy.control.scenario("s", **(faults or {"llm_faults": []}))
    return proxy.control.begin()


def oai(proxy: Proxy, retries: int = 0) -> Any:
    return openai.OpenAI(base_url=proxy.listeners["llm"] + "/v1", api_key="sk-test", max_retries=retries, timeout=20)


def claude(proxy: Proxy) -> Any:
    return anthropic.Anthropic(base_url=proxy.listeners["llm"], api_key="sk-ant-test", max_retries=0, timeout=20)


def gemini(proxy: Proxy) -> Any:
    options = types.HttpOptions(base_url=proxy.listeners["llm"], timeout=20_000)
    return genai.Client(api_key="gemini-test", http_options=options)


def openai_calls(proxy: Proxy) -> list[tuple[int, int]]:
    """Chat (JSON, streamed with include_usage) and Responses (JSON, streamed): the usage each SDK parsed."""
    with oai(proxy) as client:
        reply = client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
        seen = [(reply.usage.prompt_tokens, reply.usage.completion_tokens)]
        stream = client.chat.completions.create(
            model="gpt-4o", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
        last = list(stream)[-1].usage
        seen.append((last.prompt_tokens, last.completion_tokens))
        answer = client.responses.create(model="gpt-4o", input="What is AAPL trading at?")
        seen.append((answer.usage.input_tokens, answer.usage.output_tokens))
        done = list(client.responses.create(model="gpt-4o", input="AAPL, MSFT?", stream=True))[-1].response.usage
        seen.append((done.input_tokens, done.output_tokens))
    return seen


def other_calls(proxy: Proxy) -> list[tuple[int, int]]:
    """Anthropic (JSON, streamed) and Gemini (JSON, streamed): the usage each SDK parsed."""
    with claude(proxy) as client:
        message = client.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=MESSAGES)
        seen = [(message.usage.input_tokens, message.usage.output_tokens)]
        with client.messages.stream(model="claude-sonnet-4-6", max_tokens=100, messages=MESSAGES * 3) as stream:
            final = stream.get_final_message().usage
        seen.append((final.input_tokens, final.output_tokens))
    client = gemini(proxy)
    try:
        reply = client.models.generate_content(model="gemini-2.0-flash", contents="What is AAPL trading at?")
        chunks = list(client.models.generate_content_stream(model="gemini-2.0-flash", contents="AAPL?"))
    finally:
        client.close()
    for meta in (reply.usage_metadata, chunks[-1].usage_metadata):
        assert meta is not None
        seen.append((meta.prompt_token_count, meta.candidates_token_count))
    return seen


def test_every_llm_call_records_the_usage_its_provider_reported(world: tuple[RealUpstream, Proxy]) -> None:
    _, proxy = world
    cell = episode(proxy)
    by_sdk = openai_calls(proxy) + other_calls(proxy)
    journal = proxy.control.end(cell)
    assert [e["targets"] for e in journal] == [["chat"]] * 2 + [["responses"]] * 2 + [["claude"]] * 2 + [["gemini"]] * 2
    recorded = [(e["usage"]["input_tokens"], e["usage"]["output_tokens"]) for e in journal]
    bodies = [json.loads(e["request_body"]) for e in journal]
    fake = [(prompt_tokens(b), completion_tokens(b) if "contents" not in b else ANSWER_TOKENS) for b in bodies]
    assert recorded == fake == by_sdk
    assert [e["streamed"] for e in journal] == [True] * 8  # all answers passed as they came, none held whole
    assert all(e["usage"]["unknown"] is False for e in journal)
    assert journal[0]["usage"]["model"] and journal[0]["usage"]["cached_tokens"] == 0
    assert len({given for given, _ in recorded}) > 3  # the counts differ with the request


def test_a_stream_without_include_usage_or_cut_is_unknown(world: tuple[RealUpstream, Proxy]) -> None:
    _, proxy = world
    cell = episode(proxy)
    with oai(proxy) as client:
        list(client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True))
    (plain,) = proxy.control.end(cell)
    assert plain["usage"]["unknown"] and "include_usage" in plain["usage"]["reason"]
    assert plain["usage"]["input_tokens"] is None  # unknown, never 0
    cell = episode(proxy, llm_faults=[{"tool": "claude", "mode": "stream_cut", "after_events": 2}])
    with claude(proxy) as client:  # the stream ends cleanly after message_start and one more event
        events = list(client.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=MESSAGES, stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and "message_delta" not in kinds
    (cut,) = proxy.control.end(cell)
    assert cut["usage"]["unknown"] and cut["usage"]["output_tokens"] is None
    assert cut["usage"]["reason"].startswith(
        "the fault ended the stream early: the stream was cut before message_delta"
    )
    assert cut["usage"]["input_tokens"] == prompt_tokens(json.loads(cut["request_body"]))  # message_start came


def test_a_reply_the_proxy_made_is_known_zero_and_a_tool_call_has_none(world: tuple[RealUpstream, Proxy]) -> None:
    _, proxy = world
    cell = episode(proxy, llm_faults=[{"tool": "chat", "mode": "rate_limit", "retry_after_s": 0, "times": 1}])
    with oai(proxy, retries=1) as client:
        reply = client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    with openai.DefaultHttpxClient() as http:
        assert http.get(proxy.listeners["tools"] + "/v1/quotes?symbol=AAPL").status_code == 200
    refused, answered, tool = proxy.control.end(cell)
    assert refused["status"] == 429 and not refused["upstream_called"]
    assert (refused["usage"]["input_tokens"], refused["usage"]["output_tokens"]) == (0, 0)
    assert not refused["usage"]["unknown"] and "not billed" in refused["usage"]["reason"]
    assert answered["usage"]["input_tokens"] == reply.usage.prompt_tokens
    assert tool["targets"] == ["quotes"] and tool["usage"] is None


def test_responses_calls_to_an_api_openai_target_are_read_and_faulted_as_responses() -> None:
    """The OpenAI Agents SDK speaks Responses by default: a target that says `api: openai` (no path) gets
    POST /v1/responses beside chat completions. Each call is read as the API it went to: the Responses usage the
    SDK parsed (streamed: no include_usage exists there, the usage comes in response.completed), and a fault
    ends a Responses stream the Responses way (response.incomplete), not with a chat chunk and [DONE]."""
    with (
        RunningUpstream() as up,
        running_proxy(config_for({"llm": up.url}, {"llm": {"listener": "llm", "api": "openai"}})) as proxy,
    ):
        cell = episode(proxy)
        with oai(proxy) as client:
            answer = client.responses.create(model="gpt-4o", input="What is AAPL trading at?")
            done = list(client.responses.create(model="gpt-4o", input="AAPL, MSFT?", stream=True))[-1]
            reply = client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
        journal = proxy.control.end(cell)
        cell = episode(proxy, llm_faults=[{"mode": "truncated_response", "max_tokens": 3}])
        with oai(proxy) as client:
            events = list(client.responses.create(model="gpt-4o", input="AAPL?", stream=True))
        (cut,) = proxy.control.end(cell)
    by_sdk = [
        (answer.usage.input_tokens, answer.usage.output_tokens),
        (done.response.usage.input_tokens, done.response.usage.output_tokens),
        (reply.usage.prompt_tokens, reply.usage.completion_tokens),
    ]
    assert [e["usage"]["unknown"] for e in journal] == [False] * 3, [e["usage"] for e in journal]
    assert [(e["usage"]["input_tokens"], e["usage"]["output_tokens"]) for e in journal] == by_sdk
    assert [urlsplit(e["url"]).path for e in journal] == ["/v1/responses"] * 2 + ["/v1/chat/completions"]
    assert events[-1].type == "response.incomplete" and events[-1].response.status == "incomplete"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta").split() == ANSWER.split()[:3]
    assert cut["fault"]["applied"] and cut["usage"]["unknown"]
    ends = "truncated_response ended the stream at its word budget, with an end of its own: "  # not the provider's
    assert cut["usage"]["reason"].startswith(ends)
    assert "include_usage" not in cut["usage"]["reason"]
