"""How a streamed LLM answer ended, as the journal tells it (trial findings 2, 3 and 9): the official SDKs stream
through the real proxy from a fake upstream that pretty-prints its JSON (`{"id": "chatcmpl-1", ...}`, as real
servers do) and sends the end of its body 0.3 s after its last event, so openai-python hangs up at [DONE] first.

- A stream fault that changed no event of the answer is not applied, whatever it re-serialised, and says why.
- An agent that hangs up after its whole answer is no error; one that leaves mid-stream is.
- A stream a fault ended early says its usage is unknown because of the fault, never because of the request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

openai = pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")
anthropic = pytest.importorskip("anthropic", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

from flakeproxy.reports.html_detail import episode_detail  # noqa: E402
from flakeproxy.results import Episode  # noqa: E402
from tests.support.fake_usage import prompt_tokens  # noqa: E402
from tests.support.proxy import Proxy, config_for, running_proxy  # noqa: E402
from tests.support.upstream import ANSWER, QUESTION, SDK_TARGETS, TOOL_ARGS, RunningUpstream, openai_chat_events  # noqa: E402

TARGETS, MESSAGES = SDK_TARGETS, QUESTION
TOOLS: Any = [{"type": "function", "function": {"name": "get_quote", "parameters": {"type": "object"}}}]
#: how many events the fake's tool-call-only stream has, [DONE] included (a fault counting to it reaches the end)
TOOL_EVENTS = len(openai_chat_events({"tools": TOOLS}))
NOTHING = "the fault changed nothing in the answer ({}: nothing to rewrite)"


@pytest.fixture(scope="module", params=[0.0, 0.02], ids=["at-once", "paced"])
def pace(request: pytest.FixtureRequest) -> float:
    """The upstream sends its events all at once, or 20 ms apart as a provider does."""
    return float(request.param)


@pytest.fixture(scope="module")
def proxy(pace: float) -> Iterator[Proxy]:
    """At the pace, the body ending 0.3 s after the stream's own end."""
    with (
        RunningUpstream(event_gap_s=pace, end_gap_s=0.3) as up,
        running_proxy(config_for({"llm": up.url}, TARGETS)) as running,
    ):
        yield running


#: how the journal says a truncated_response ended a stream: the fault's end, not a cut of the provider's
TRUNCATED = "truncated_response ended the stream at its word budget, with an end of its own"


def in_episode(proxy: Proxy, act: Any, *faults: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """act(client) in one episode under the faults: what it returned, and the call's journal entry."""
    proxy.control.ok("POST", "/reset")
    client = openai.OpenAI(base_url=proxy.listeners["llm"] + "/v1", api_key="sk-test", max_retries=0, timeout=20)
    try:
        done, [entry] = proxy.control.in_episode(lambda _: act(client), llm_faults=list(faults))
    finally:
        client.close()
    assert entry["complete"], entry
    return done, entry


def chunks(client: Any, tools: bool = False, usage: bool = False) -> list[Any]:
    options = {"stream_options": {"include_usage": True}} if usage else {}
    more = {"tools": TOOLS} if tools else {}
    return list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True, **options, **more))


def arguments(got: list[Any]) -> str:
    pieces = [call.function.arguments or "" for c in got for ch in c.choices for call in ch.delta.tool_calls or []]
    return "".join(pieces)


def text(got: list[Any]) -> str:
    return "".join(choice.delta.content or "" for c in got for choice in c.choices)


@pytest.mark.parametrize(
    ("fault", "tools"),
    [
        ({"mode": "truncated_response", "max_tokens": 2}, True),
        ({"mode": "stream_cut", "after_events": TOOL_EVENTS}, True),
        ({"mode": "mid_stream_error", "after_events": TOOL_EVENTS}, True),
        ({"mode": "stream_reset", "after_events": TOOL_EVENTS}, True),
        ({"mode": "tool_call_corruption", "corruption": "invalid_json"}, False),
    ],
    ids=lambda f: f["mode"] if isinstance(f, dict) else "",
)
def test_a_stream_fault_that_changed_no_event_is_not_applied(proxy: Proxy, fault: dict[str, Any], tools: bool) -> None:
    """A tool-call-only answer (no text to cut), faults counting to its very end, a tool-call fault on a text
    answer: the agent gets every event as the upstream sent it, so the fault is decided, not applied, and the
    journal says why."""
    got, entry = in_episode(proxy, lambda client: chunks(client, tools=tools), {"tool": "chat", **fault})
    if tools:
        assert arguments(got) == TOOL_ARGS and got[-1].choices[0].finish_reason == "tool_calls"
    else:
        assert text(got) == ANSWER and got[-1].choices[0].finish_reason == "stop"
    record = entry["fault"]
    assert (record["kind"], record["applied"], record["effect"]) == (fault["mode"], False, None), record
    assert record["not_applied_reason"] == NOTHING.format(fault["mode"])
    assert entry["status"] == 200 and entry["error"] is None


def test_a_truncated_text_answer_is_applied_and_its_usage_blames_the_fault(proxy: Proxy) -> None:
    """The synthetic end (finish_reason length, [DONE]) carries no usage chunk: the fault cannot know the count."""
    fault = {"tool": "chat", "mode": "truncated_response", "max_tokens": 2}
    got, entry = in_episode(proxy, lambda client: chunks(client, usage=True), fault)
    assert text(got) == "AAPL trades" and got[-1].choices[0].finish_reason == "length"
    assert all(c.usage is None for c in got)
    assert entry["fault"]["applied"] is True and "stream ended after" in entry["fault"]["effect"]
    usage = entry["usage"]
    assert usage["unknown"] and usage["input_tokens"] is None
    assert usage["reason"] == f"{TRUNCATED}: the stream was cut before its usage chunk"
    _, plain = in_episode(proxy, chunks, fault)  # the request did not ask: then that is the reason
    assert plain["usage"]["reason"] == (
        f"{TRUNCATED}: the stream reported no usage (stream_options.include_usage was not set)"
    )


def test_a_truncated_anthropic_stream_has_no_made_up_output_count(proxy: Proxy) -> None:
    """The fault's message_delta must say some output_tokens (the SDK reads them); the journal does not take it."""
    proxy.control.ok("POST", "/reset")
    fault = {"tool": "claude", "mode": "truncated_response", "max_tokens": 2}
    client = anthropic.Anthropic(base_url=proxy.listeners["llm"], api_key="sk-ant-test", max_retries=0, timeout=20)

    def ask(_: str) -> Any:
        with client.messages.stream(model="m", max_tokens=100, messages=MESSAGES) as stream:
            return stream.get_final_message()

    try:
        message, [entry] = proxy.control.in_episode(ask, llm_faults=[fault])
    finally:
        client.close()
    assert (message.content[0].text, message.stop_reason) == ("AAPL trades", "max_tokens")
    usage = entry["usage"]
    assert usage["unknown"] and usage["output_tokens"] is None, usage
    assert usage["reason"].startswith(f"{TRUNCATED}: the stream was cut before message_delta")
    assert usage["input_tokens"] == prompt_tokens(json.loads(entry["request_body"]))


def test_an_agent_that_hangs_up_after_done_is_no_error(proxy: Proxy) -> None:
    """openai-python closes its connection at [DONE], before the upstream's end of body: the call is complete, its
    usage read, and the report shows its status alone."""
    got, entry = in_episode(proxy, lambda client: chunks(client, usage=True))
    assert text(got) and got[-1].usage is not None
    assert (entry["status"], entry["error"], entry["closed_mid_body"]) == (200, None, False)
    assert entry["usage"]["unknown"] is False and entry["usage"]["output_tokens"] == got[-1].usage.completion_tokens
    _, plain = in_episode(proxy, chunks)
    assert plain["error"] is None
    assert plain["usage"]["reason"] == "the stream reported no usage (stream_options.include_usage was not set)"
    episode = Episode(id="e1", scenario="s", prompt="p", prompt_index=0, label="l", journal=[entry, plain])
    html = episode_detail(episode, "e1")
    assert "<td>200</td>" in html and "disconnected" not in html.lower()


def test_an_agent_that_leaves_mid_stream_keeps_the_error(proxy: Proxy, pace: float) -> None:
    """Mid-stream at a real pace. At once, the whole stream, [DONE] too, has usually passed the proxy before the
    agent reads its second event, so the agent had all of the answer and its leaving is no error; on a loaded
    machine the proxy may still be sending, and then it is the same error as at a real pace."""

    def leave(client: Any) -> str:
        stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        first = [next(stream), next(stream)]
        stream.close()
        return text(first)

    got, entry = in_episode(proxy, leave)
    assert got == "AAPL"
    if not pace and entry["error"] is None:
        assert entry["status"] == 200
        return
    assert (entry["status"], entry["error"]) == (200, "Client disconnected.")
    assert entry["usage"]["unknown"] and entry["usage"]["reason"].startswith("Client disconnected.: ")


def test_a_stream_the_fault_ended_is_journaled_as_the_agent_had_it_before_the_upstream_ends(proxy: Proxy) -> None:
    """The episode ends (its journal read) while the upstream is still sending (its body ends 0.3 s after its
    events): the cut call's latency is what the agent waited and its headers are there (trial: latency null,
    shown as 0 ms, headers empty)."""
    proxy.control.ok("POST", "/reset")
    client = openai.OpenAI(base_url=proxy.listeners["llm"] + "/v1", api_key="sk-test", max_retries=0, timeout=20)
    cut = {"mode": "stream_cut", "after_events": 2}
    try:
        with proxy.control.scenario_on(llm_faults=[cut]):
            episode = proxy.control.begin()
            try:
                got = text(chunks(client))
            except openai.APIError:
                got = None  # an SDK may or may not raise on a stream cut without its end
            (entry,) = proxy.control.end(episode)
    finally:
        client.close()
    assert got != ANSWER and entry["fault"]["applied"] is True
    assert entry["latency_ms"] is not None and entry["latency_ms"] < 300, entry["latency_ms"]
    assert entry["response_headers"]["content-type"].startswith("text/event-stream")
    row = f"<td class=num>{entry['latency_ms']:.0f}</td>"
    assert row in episode_detail(
        Episode(id="e", scenario="s", prompt="p", prompt_index=0, label="l", journal=[entry]), "e"
    )
    unmeasured = {**entry, "latency_ms": None}
    html = episode_detail(
        Episode(id="e", scenario="s", prompt="p", prompt_index=0, label="l", journal=[unmeasured]), "e"
    )
    assert 'title="not measured">-</span>' in html and "<td class=num>0</td>" not in html
