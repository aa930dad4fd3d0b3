"""The spans flakeproxy exports: each journal entry as a GenAI / MCP / HTTP span in the agent's trace, with the
fault on it; the episode's span with one gen_ai.evaluation.result event per verdict."""

from __future__ import annotations

import json
from typing import Any

import pytest

from flakeproxy.config.proxy import Target
from flakeproxy.results import CellResult, Episode, EpisodeVerdict
from flakeproxy.telemetry.call_spans import call_span
from flakeproxy.telemetry.episode_span import episode_span, evaluations

TRACE, AGENT_SPAN, RUNNER_SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "b" * 16, "a" * 16
TARGETS = {
    "llm": Target(listener="llm", api="openai"),
    "gemini": Target(listener="llm", api="gemini"),
    "quotes": Target(listener="tools", path="/v1/quotes*"),
    "search": Target(listener="mcp", mcp_tool="web_search"),
}
TRACED = {"traceparent": f"00-{TRACE}-{AGENT_SPAN}-01"}
APPLIED = {"scenario": "s", "section": "tool_faults", "index": 0, "kind": "rate_limit", "applied": True}
APPLIED |= {"effect": "answered 429 with Retry-After: 1", "not_applied_reason": None, "settled": True}


def entry(targets: list[str], url: str, request: Any = "", **extra: Any) -> dict[str, Any]:
    body = request if isinstance(request, str) else json.dumps(request)
    base = {"seq": 3, "targets": targets, "url": url, "method": "POST", "request_headers": TRACED}
    return {**base, "request_body": body, "started_at": 1_700_000_000.5, "latency_ms": 250.0, "status": 200, **extra}


def sse(*messages: Any) -> str:
    return "".join(f"event: message\ndata: {json.dumps(m)}\n\n" for m in messages)


TOOL_CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "web_search", "arguments": {}}}


@pytest.mark.parametrize(
    ("journal_entry", "name", "expected", "status"),
    [
        (
            entry(["llm"], "https://api.openai.com/v1/chat/completions", {"model": "gpt-4o"}, status=429,
                  fault=APPLIED),
            "chat gpt-4o",
            {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
             "error.type": "429", "http.response.status_code": 429, "flakeproxy.fault.mode": "rate_limit",
             "flakeproxy.fault.applied": True, "flakeproxy.fault.effect": "answered 429 with Retry-After: 1"},
            "error",
        ),
        (
            entry(["llm"], "http://llm/v1/chat/completions", {"model": "m"},
                  response_body=json.dumps({"model": "m-1", "usage": {"prompt_tokens": 9, "completion_tokens": 4}})),
            "chat m",
            {"gen_ai.usage.input_tokens": 9, "gen_ai.usage.output_tokens": 4, "gen_ai.response.model": "m-1"},
            "unset",
        ),
        (
            entry(["gemini"], "https://g/v1beta/models/gemini-2.5-flash:generateContent", {"contents": []}),
            "chat gemini-2.5-flash",
            {"gen_ai.provider.name": "gcp.gemini", "gen_ai.request.model": "gemini-2.5-flash"},
            "unset",
        ),
        (
            entry(["quotes"], "http://tools:9000/v1/quotes?symbol=AAPL", method="GET", status=503),
            "execute_tool quotes",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "quotes", "error.type": "503",
             "server.address": "tools", "server.port": 9000, "url.full": "http://tools:9000/v1/quotes?symbol=AAPL"},
            "error",
        ),
        (
            entry(["search"], "http://mcp/mcp", TOOL_CALL, request_headers={**TRACED, "mcp-session-id": "s1"},
                  response_body=sse({"jsonrpc": "2.0", "id": 7, "result": {"content": [], "isError": True}})),
            "tools/call web_search",
            {"mcp.method.name": "tools/call", "gen_ai.tool.name": "web_search", "jsonrpc.request.id": "7",
             "gen_ai.operation.name": "execute_tool", "error.type": "tool_error", "mcp.session.id": "s1"},
            "error",
        ),
        (
            entry([], "http://mcp/mcp", {**TOOL_CALL, "method": "tools/list", "params": {}},
                  response_body=json.dumps({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "no"}})),
            "tools/list",
            {"mcp.method.name": "tools/list", "rpc.response.status_code": "-32601", "error.type": "-32601"},
            "error",
        ),
        (
            entry([], "http://other/x", status=None, error="connection reset by peer"),
            "POST",
            {"error.type": "_OTHER", "http.request.method": "POST"},
            "error",
        ),
    ],
    ids=["llm-429", "llm-usage", "gemini", "tool-503", "mcp-is-error", "mcp-jsonrpc-error", "no-answer"],
)  # fmt: skip
def test_each_call_is_a_span_in_the_agents_trace(
    journal_entry: dict[str, Any], name: str, expected: dict[str, Any], status: str
) -> None:
    spec = call_span(journal_entry, "e4", "s", (TRACE, RUNNER_SPAN), TARGETS)
    assert (spec.name, spec.trace_id, spec.parent_span_id, spec.status) == (name, TRACE, AGENT_SPAN, status)
    assert {k: spec.attributes.get(k) for k in expected} == expected
    assert (spec.attributes["flakeproxy.episode.id"], spec.attributes["flakeproxy.scenario"]) == ("e4", "s")
    assert (spec.start_ns, spec.end_ns) == (1_700_000_000_500_000_000, 1_700_000_000_750_000_000)
    assert (
        spec.kind == "client"
        and spec.span_id == call_span(journal_entry, "e4", "s", (TRACE, RUNNER_SPAN), TARGETS).span_id
    )


def test_a_call_without_trace_context_hangs_under_the_episode() -> None:
    spec = call_span(
        entry(["quotes"], "http://t/v1/quotes", request_headers={}), "e1", None, (TRACE, RUNNER_SPAN), TARGETS
    )
    assert (spec.trace_id, spec.parent_span_id) == (TRACE, RUNNER_SPAN)
    assert "flakeproxy.fault.mode" not in spec.attributes and "error.type" not in spec.attributes


def test_the_episode_span_carries_every_verdict_as_an_evaluation_event() -> None:
    episode = Episode(
        id="e2", scenario="down", prompt="p", prompt_index=0, label="down | p0 | r0", error="agent error: HTTP 500"
    )
    verdicts = [
        EpisodeVerdict(episode="e2", prompt="p", outcome="fail", reason="did not record it", score=0.0),
        EpisodeVerdict(episode="e9", prompt="p", outcome="pass", reason="someone else's", score=1.0),
    ]
    cell = CellResult(
        invariant="noticed", type="telemetry_noticed", scenario="down", severity="high", when="always",
        outcome="fail", reason="x", verdicts=verdicts,
    )  # fmt: skip
    cannot = cell.model_copy(
        update={"invariant": "ttd", "verdicts": [verdicts[0].model_copy(update={"outcome": "error"})]}
    )
    events = evaluations(episode, [cell, cannot], 5)
    spec = episode_span(episode, (TRACE, RUNNER_SPAN), 10.0, 12.5, events)
    assert (spec.span_id, spec.parent_span_id, spec.name) == (RUNNER_SPAN, None, "invoke_agent down | p0 | r0")
    assert (spec.status, spec.attributes["error.type"], spec.end_ns - spec.start_ns) == (
        "error",
        "agent_error",
        2_500_000_000,
    )
    assert [(e.name, e.time_ns) for e in spec.events] == [("gen_ai.evaluation.result", 5)] * 2
    assert spec.events[0].attributes == {
        "gen_ai.evaluation.name": "noticed",
        "gen_ai.evaluation.score.value": 0.0,
        "gen_ai.evaluation.score.label": "fail",
        "gen_ai.evaluation.explanation": "did not record it",
        "flakeproxy.invariant.type": "telemetry_noticed",
        "flakeproxy.invariant.severity": "high",
        "flakeproxy.scenario": "down",
    }
    assert spec.events[1].attributes["error.type"] == "cannot_judge"
