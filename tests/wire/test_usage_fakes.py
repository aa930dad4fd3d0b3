"""The fake LLM upstreams report usage in the providers' real shapes, with counts that follow the request: read
back exactly by flakeproxy's readers, and parsed by the official SDKs over real HTTP as the fake meant them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from flakeproxy.wire.usage import read_body
from flakeproxy.wire.usage_stream import UsageReader
from tests.fidelity.gemini_upstream import gemini_events, gemini_json
from tests.support.fake_usage import ANSWER_TOKENS, TOOL_TOKENS, completion_tokens, prompt_tokens
from tests.support.upstream import (
    RunningUpstream,
    anthropic_events,
    anthropic_json,
    openai_chat_events,
    openai_chat_json,
    responses_events,
    responses_json,
)

SHORT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "AAPL?"}]}
LONG = {"model": "gpt-4o", "messages": [{"role": "user", "content": "What is AAPL trading at? " * 40}]}
TOOLS = {**SHORT, "tools": [{"type": "function", "function": {"name": "get_quote", "parameters": {}}}]}
Events = Callable[[dict[str, Any]], list[bytes]]


def stream_usage(api: Any, events: list[bytes]) -> tuple[int | None, int | None]:
    reader = UsageReader(api)
    for event in events:
        reader.feed(event)
    usage = reader.finish()
    return usage.input_tokens, usage.output_tokens


@pytest.mark.parametrize("body", [SHORT, LONG, TOOLS], ids=["short", "long", "tool-call"])
@pytest.mark.parametrize(
    ("api", "stream", "answer", "extra"),
    [
        ("openai", openai_chat_events, openai_chat_json, {"stream": True, "stream_options": {"include_usage": True}}),
        ("openai-responses", responses_events, responses_json, {"stream": True}),
        ("anthropic", anthropic_events, anthropic_json, {"stream": True}),
        ("gemini", lambda b: gemini_events(body=b), lambda b: gemini_json(body=b), {}),
    ],
)
def test_the_fakes_report_what_the_readers_read(
    body: dict[str, Any], api: Any, stream: Events, answer: Callable[[dict[str, Any]], Any], extra: dict[str, Any]
) -> None:
    made = completion_tokens(body) if api != "gemini" else ANSWER_TOKENS  # the Gemini fake never calls tools
    assert read_body(api, json.dumps(answer(body))).input_tokens == prompt_tokens(body)
    assert read_body(api, json.dumps(answer(body))).output_tokens == made
    streamed = {**body, **extra}
    assert stream_usage(api, stream(streamed)) == (prompt_tokens(streamed), made)


def test_the_counts_follow_the_request() -> None:
    assert prompt_tokens(LONG) > 10 * prompt_tokens(SHORT)
    assert (completion_tokens(SHORT), completion_tokens(TOOLS)) == (ANSWER_TOKENS, TOOL_TOKENS)


def test_a_chat_stream_reports_usage_only_with_include_usage() -> None:
    plain = openai_chat_events({**SHORT, "stream": True})
    assert not any(b'"usage"' in e for e in plain)
    with_usage = openai_chat_events({**SHORT, "stream": True, "stream_options": {"include_usage": True}})
    assert len(with_usage) == len(plain) + 1 and all(b'"usage": null' in e for e in with_usage[:-2])
    assert UsageReader("openai").finish().unknown


def test_cut_fake_streams_are_unknown() -> None:
    body = {**SHORT, "stream": True, "stream_options": {"include_usage": True}}
    for api, events in [
        ("openai", openai_chat_events(body)[:-2]),
        ("openai-responses", responses_events(body)[:-1]),
        ("anthropic", anthropic_events(body)[:-2]),
        ("gemini", gemini_events(body=body)[:-1]),
    ]:
        assert stream_usage(api, events)[1] is None, api


MESSAGES: Any = [{"role": "user", "content": "What is AAPL trading at?"}]
SDKS_SKIP = "the SDKs install beside mitmproxy 12 on Python 3.13+ only"


def test_the_official_sdks_parse_the_fakes_usage_over_http() -> None:
    """openai (chat JSON, chat stream with include_usage, Responses stream) and anthropic (stream) against the
    fake upstream on loopback: each SDK's usage is the count the fake computed from the request it received."""
    openai = pytest.importorskip("openai", reason=SDKS_SKIP)
    anthropic = pytest.importorskip("anthropic", reason=SDKS_SKIP)
    with RunningUpstream(event_gap_s=0.01) as up:
        expect = []
        with openai.OpenAI(base_url=up.url + "/v1", api_key="sk-test", max_retries=0) as client:
            reply = client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
            got = [(reply.usage.prompt_tokens, reply.usage.completion_tokens)]
            chunks = list(
                client.chat.completions.create(
                    model="gpt-4o", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
                )
            )
            assert chunks[-1].choices == [] and all(c.usage is None for c in chunks[:-1])
            got.append((chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens))
            events = list(client.responses.create(model="gpt-4o", input="What is AAPL trading at?", stream=True))
            usage = events[-1].response.usage  # response.completed
            got.append((usage.input_tokens, usage.output_tokens))
        with anthropic.Anthropic(base_url=up.url, api_key="sk-ant-test", max_retries=0) as claude:
            with claude.messages.stream(model="claude-sonnet-4-6", max_tokens=100, messages=MESSAGES) as stream:
                final = stream.get_final_message().usage
            got.append((final.input_tokens, final.output_tokens))
        for seen in up.requests:
            body = json.loads(seen.body)
            expect.append((prompt_tokens(body), completion_tokens(body)))
    assert got == expect
    assert len({given for given, _ in got}) > 1  # the counts differ with the request


def test_the_gemini_sdk_parses_the_fakes_usage_over_http() -> None:
    pytest.importorskip("google.genai", reason=SDKS_SKIP)
    from google import genai
    from google.genai import types

    from tests.fidelity.real_upstream import RunningRealUpstream

    with RunningRealUpstream() as up:
        client = genai.Client(api_key="gemini-test", http_options=types.HttpOptions(base_url=up.url))
        try:
            reply = client.models.generate_content(model="gemini-2.0-flash", contents="What is AAPL trading at?")
            chunks = list(client.models.generate_content_stream(model="gemini-2.0-flash", contents="AAPL?"))
        finally:
            client.close()
    given = []
    for meta in (reply.usage_metadata, chunks[-1].usage_metadata):
        assert meta is not None and meta.candidates_token_count == ANSWER_TOKENS
        assert meta.prompt_token_count and meta.total_token_count == meta.prompt_token_count + ANSWER_TOKENS
        given.append(meta.prompt_token_count)
    assert given[0] != given[1]  # the counts differ with the request
