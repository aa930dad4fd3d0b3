"""The official openai and anthropic SDKs as clients: how real clients react to each LLM fault."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

openai = pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")
anthropic = pytest.importorskip("anthropic", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

from tests.support.proxy import Proxy, config_for, running_proxy  # noqa: E402
from tests.support.upstream import ANSWER, QUESTION, SDK_TARGETS, RunningUpstream, Upstream  # noqa: E402

TARGETS, MESSAGES = SDK_TARGETS, QUESTION


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[Upstream, Proxy]]:
    with RunningUpstream() as up, running_proxy(config_for({"llm": up.url}, TARGETS)) as proxy:
        yield up, proxy


CLIENTS: list[Any] = []


@pytest.fixture(autouse=True)
def close_clients() -> Iterator[None]:
    """Close every SDK client a test made: an open keep-alive connection outlives the proxy otherwise."""
    yield
    while CLIENTS:
        CLIENTS.pop().close()


def oai(proxy: Proxy) -> Any:
    client = openai.OpenAI(base_url=proxy.listeners["llm"] + "/v1", api_key="sk-test", max_retries=2, timeout=20)
    CLIENTS.append(client)
    return client


def claude(proxy: Proxy) -> Any:
    client = anthropic.Anthropic(base_url=proxy.listeners["llm"], api_key="sk-ant-test", max_retries=2, timeout=20)
    CLIENTS.append(client)
    return client


def chat_stream(proxy: Proxy) -> tuple[str, str | None]:
    text, finish = "", None
    for chunk in oai(proxy).chat.completions.create(model="m", messages=MESSAGES, stream=True):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    return text, finish


def claude_stream(proxy: Proxy) -> Any:
    with claude(proxy).messages.stream(model="m", max_tokens=100, messages=MESSAGES) as stream:
        return stream.get_final_message()


def scenario(proxy: Proxy, **faults: Any) -> str:
    """Start from a clean proxy (no open cells), set the faults, open one cell."""
    proxy.control.ok("POST", "/reset")
    proxy.control.scenario("s", **faults)
    return proxy.control.begin()


# -- 429 with Retry-After: the SDK retries, and every attempt is in the journal


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_rate_limit_is_retried_and_each_attempt_journaled(world: tuple[Upstream, Proxy], sdk: str) -> None:
    up, proxy = world
    target = "chat" if sdk == "openai" else "claude"
    cell = scenario(proxy, llm_faults=[{"tool": target, "mode": "rate_limit", "retry_after_s": 1, "times": 2}])
    before = up.count()
    start = time.monotonic()
    if sdk == "openai":
        reply = oai(proxy).chat.completions.create(model="m", messages=MESSAGES)
        text = reply.choices[0].message.content
    else:
        text = claude(proxy).messages.create(model="m", max_tokens=100, messages=MESSAGES).content[0].text
    elapsed = time.monotonic() - start
    journal = proxy.control.end(cell)
    assert text == ANSWER
    assert [(e["status"], e["fault"]["kind"] if e["fault"] else None) for e in journal] == [
        (429, "rate_limit"),
        (429, "rate_limit"),
        (200, None),
    ]
    assert up.count() - before == 1  # only the third attempt reached the upstream
    assert elapsed >= 1.9  # the SDK waited the 1 s Retry-After twice


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_rate_limit_exhausts_retries(world: tuple[Upstream, Proxy], sdk: str) -> None:
    _, proxy = world
    target = "chat" if sdk == "openai" else "claude"
    cell = scenario(proxy, llm_faults=[{"tool": target, "mode": "rate_limit", "retry_after_s": 0}])
    with pytest.raises(openai.RateLimitError if sdk == "openai" else anthropic.RateLimitError):
        if sdk == "openai":
            oai(proxy).chat.completions.create(model="m", messages=MESSAGES)
        else:
            claude(proxy).messages.create(model="m", max_tokens=100, messages=MESSAGES)
    assert len(proxy.control.end(cell)) == 3  # 1 try + 2 retries


# -- a cut stream: both SDKs accept it silently


def test_openai_cut_stream_gives_partial_text_and_no_finish_reason(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    scenario(proxy, llm_faults=[{"tool": "chat", "mode": "stream_cut", "after_events": 4}])
    text, finish = chat_stream(proxy)
    assert text == "AAPL trades at" and finish is None


def test_anthropic_cut_stream_gives_partial_text_and_no_stop_reason(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    scenario(proxy, llm_faults=[{"tool": "claude", "mode": "stream_cut", "after_events": 5}])
    message = claude_stream(proxy)
    assert message.stop_reason is None and message.content[0].text == "AAPL trades at"


# -- an error event inside a 200 stream: both SDKs raise, and do not retry


def test_openai_mid_stream_error_raises(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    cell = scenario(
        proxy,
        llm_faults=[{"tool": "chat", "mode": "mid_stream_error", "after_events": 2, "message": "injected mid-stream"}],
    )
    with pytest.raises(openai.APIError, match="injected mid-stream"):
        chat_stream(proxy)
    assert len(proxy.control.end(cell)) == 1


def test_anthropic_mid_stream_error_raises(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    cell = scenario(
        proxy,
        llm_faults=[{"tool": "claude", "mode": "mid_stream_error", "after_events": 2, "message": "injected overload"}],
    )
    with pytest.raises(anthropic.APIStatusError, match="injected overload"):
        claude_stream(proxy)
    assert len(proxy.control.end(cell)) == 1


# -- truncated_response: finish_reason length / stop_reason max_tokens


def test_openai_truncated_response(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    scenario(proxy, llm_faults=[{"tool": "chat", "mode": "truncated_response", "max_tokens": 2}])
    reply = oai(proxy).chat.completions.create(model="m", messages=MESSAGES)
    assert (reply.choices[0].message.content, reply.choices[0].finish_reason) == ("AAPL trades", "length")
    assert chat_stream(proxy) == ("AAPL trades", "length")


def test_anthropic_truncated_response(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    scenario(proxy, llm_faults=[{"tool": "claude", "mode": "truncated_response", "max_tokens": 2}])
    reply = claude(proxy).messages.create(model="m", max_tokens=100, messages=MESSAGES)
    assert (reply.content[0].text, reply.stop_reason) == ("AAPL trades", "max_tokens")
    message = claude_stream(proxy)
    assert (message.content[0].text, message.stop_reason) == ("AAPL trades", "max_tokens")


def test_anthropic_overloaded_529_is_retried_then_raised(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    cell = scenario(proxy, llm_faults=[{"tool": "claude", "mode": "overloaded", "retry_after_s": 0}])
    with pytest.raises(anthropic.InternalServerError) as info:
        claude(proxy).messages.create(model="m", max_tokens=100, messages=MESSAGES)
    assert info.value.status_code == 529
    assert [e["status"] for e in proxy.control.end(cell)] == [529, 529, 529]


# -- tool_call_corruption truncate_json on a stream: one prefix of the joined arguments, as a real cut answer


TOOLS: Any = [{"name": "get_quote", "description": "quote", "input_schema": {"type": "object", "properties": {}}}]
OAI_TOOLS: Any = [{"type": "function", "function": {"name": "get_quote", "parameters": {"type": "object"}}}]


def test_anthropic_streamed_truncated_tool_input_ends_silently_empty(world: tuple[Upstream, Proxy]) -> None:
    """A real cut tool input parses as a partial JSON prefix: the SDK finishes with input == {}, no error."""
    _, proxy = world
    scenario(proxy, llm_faults=[{"tool": "claude", "mode": "tool_call_corruption", "corruption": "truncate_json"}])
    with claude(proxy).messages.stream(model="m", max_tokens=100, messages=MESSAGES, tools=TOOLS) as stream:
        message = stream.get_final_message()
    assert message.content[0].type == "tool_use" and message.content[0].input == {}


def test_openai_streamed_truncated_tool_arguments_are_a_prefix(world: tuple[Upstream, Proxy]) -> None:
    from tests.support.upstream import TOOL_ARGS

    _, proxy = world
    scenario(proxy, llm_faults=[{"tool": "chat", "mode": "tool_call_corruption", "corruption": "truncate_json"}])
    args = ""
    for chunk in oai(proxy).chat.completions.create(model="m", messages=MESSAGES, tools=OAI_TOOLS, stream=True):
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or []:
                args += (call.function.arguments or "") if call.function else ""
    assert args and TOOL_ARGS.startswith(args) and args != TOOL_ARGS


# -- stream_reset: the connection cut mid-answer with no chunk terminator, as a load balancer does


def test_openai_stream_reset_raises_api_connection_error_and_the_journal_says_where(
    world: tuple[Upstream, Proxy],
) -> None:
    _, proxy = world
    cell = scenario(proxy, llm_faults=[{"tool": "chat", "mode": "stream_reset", "after_events": 3}])
    with pytest.raises(openai.APIConnectionError) as info:
        chat_stream(proxy)
    assert "incomplete chunked read" in repr(info.value.__cause__)
    (entry,) = proxy.control.end(cell)  # a cut inside a stream is not retried
    assert entry["status"] == 200 and entry["error"].startswith("connection cut by fault mid-stream after 3 events")
    assert "connection cut mid-stream after 3 events" in entry["fault"]["effect"]


def test_anthropic_reset_mid_body_raises_api_connection_error_after_retries(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    cell = scenario(proxy, llm_faults=[{"tool": "claude", "mode": "stream_reset", "after_bytes": 40}])
    with pytest.raises(anthropic.APIConnectionError):
        claude(proxy).messages.create(model="m", max_tokens=100, messages=MESSAGES)
    journal = proxy.control.end(cell)
    assert len(journal) == 3 and all("mid-body after 40 of" in e["error"] for e in journal)


def test_anthropic_stream_reset_surfaces_the_transport_error(world: tuple[Upstream, Proxy]) -> None:
    """anthropic-python's messages.stream does not wrap a cut inside the body: httpx's error comes out."""
    _, proxy = world
    scenario(proxy, llm_faults=[{"tool": "claude", "mode": "stream_reset", "after_events": 3}])
    with pytest.raises(Exception, match="incomplete chunked read") as info:
        claude_stream(proxy)
    assert type(info.value).__name__ == "RemoteProtocolError"


# -- a rewrite of a Responses stream reaches what the SDK keeps: the part, the item and the response repeat it whole


@pytest.mark.parametrize(
    ("fault", "expect"),
    [
        ({"mode": "garbage", "text": "##@@ gibberish"}, "##@@ gibberish"),
        ({"mode": "response_drift", "drift_type": "format_change"}, "- " + ANSWER),
    ],
    ids=["garbage", "response_drift"],
)
def test_a_responses_stream_rewrite_is_the_answer_the_sdk_keeps(
    world: tuple[Upstream, Proxy], fault: dict[str, Any], expect: str
) -> None:
    """A trial's Agents SDK agent got the calm answer under `garbage` (only the deltas were rewritten; it reads
    response.completed) and was FAILed for it. Every event that repeats the text now carries what the deltas became."""
    _, proxy = world
    cell = scenario(proxy, llm_faults=[{"tool": "responses", **fault}])
    deltas = ""
    with oai(proxy).responses.stream(model="m", input="What is AAPL trading at?") as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                deltas += event.delta
            elif event.type in ("response.output_text.done", "response.content_part.done"):
                assert (event.text if hasattr(event, "text") else event.part.text) == deltas
            elif event.type == "response.output_item.done":
                assert event.item.content[0].text == deltas
        final = stream.get_final_response()
    assert deltas.startswith(expect[:12]) and final.output_text == deltas != ANSWER
    [entry] = proxy.control.end(cell)
    assert entry["fault"]["applied"] is True


def test_a_truncated_responses_stream_ends_as_the_api_ends_one_at_max_output_tokens(
    world: tuple[Upstream, Proxy],
) -> None:
    """A trial's Agents SDK got `response.incomplete` with `output: []` and no id and raised ModelBehaviorError, which
    a real truncation would not make it: the part, the item and the response (its id, so the SDK's lifecycle check
    holds) now close with the words that passed. The SDK keeps no final response for an incomplete one (nor for the
    real API's): its last event carries it."""
    _, proxy = world
    scenario(proxy, llm_faults=[{"tool": "responses", "mode": "truncated_response", "max_tokens": 4}])
    deltas, kinds, last = "", [], None
    with oai(proxy).responses.stream(model="m", input="What is AAPL trading at?") as stream:
        for event in stream:
            kinds.append(event.type)
            deltas += event.delta if event.type == "response.output_text.delta" else ""
            last = event
    assert last is not None and last.type == "response.incomplete"
    final = last.response
    assert deltas == " ".join(ANSWER.split()[:4]) + " " or deltas.split() == ANSWER.split()[:4], deltas
    assert kinds[-4:] == [
        "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.incomplete"
    ]  # fmt: skip
    assert final.status == "incomplete" and final.incomplete_details.reason == "max_output_tokens"
    assert final.output_text == deltas and final.output[0].status == "incomplete" and final.id == "resp_1"


def test_a_rate_limit_names_the_model_the_request_asked_for(world: tuple[Upstream, Proxy]) -> None:
    """OpenAI's 429 says the model it limits; a trial's said gpt-4o to a gpt-4o-mini request."""
    _, proxy = world
    scenario(proxy, llm_faults=[{"tool": "chat", "mode": "rate_limit", "retry_after_s": 0}])
    client = openai.OpenAI(base_url=proxy.listeners["llm"] + "/v1", api_key="sk-test", max_retries=0, timeout=20)
    CLIENTS.append(client)
    with pytest.raises(openai.RateLimitError) as raised:
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert "Rate limit reached for gpt-4o-mini in organization" in str(raised.value)
