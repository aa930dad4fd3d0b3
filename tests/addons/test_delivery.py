"""A context attack on an MCP tool's answer reaches the agent (bytes changed, in text and structuredContent) and,
when the agent passes the tool's answer on, its model: the proxy finds the payload in the agent's next LLM
request, whether that request is streamed through or held for a fault."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any, TypedDict

import pytest

pytest.importorskip("mcp", reason="the mcp SDK installs beside mitmproxy 12 on Python 3.13+ only")

from mcp import Client

from flakeproxy.proxycore.delivery import mark_delivery
from flakeproxy.wire.record import read_fault
from tests.support.http import fetch
from tests.support.loops import free_port
from tests.support.mcp_server import serving
from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.upstream import RunningUpstream

CANARY = "FLAKEPROXY-CANARY-DELIVERY"
TARGETS = {
    "news": {"listener": "mcp", "mcp_tool": "web_search"},
    "llm": {"listener": "llm", "path": "/v1/chat/completions", "api": "openai"},
}
ATTACK = {"type": "indirect_injection", "tool": "news", "canary": CANARY}


class News(TypedDict):
    headline: str
    source: str


@pytest.fixture(scope="module")
def world() -> Iterator[Proxy]:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("news")

    @server.tool()
    def web_search(query: str) -> News:
        """Search the news (structured output: clients of it read structuredContent)."""
        return {"headline": f"{query} rose 1.2% after the keynote", "source": "newswire"}

    port = free_port()
    with (
        serving(server.streamable_http_app(), port, "mcp-news"),
        RunningUpstream(event_gap_s=0.02) as llm,
        running_proxy(config_for({"mcp": f"http://127.0.0.1:{port}", "llm": llm.url}, TARGETS)) as proxy,
    ):
        yield proxy


async def _search(url: str) -> Any:
    async with Client(url + "/mcp", read_timeout_seconds=10) as client:
        return await client.call_tool("web_search", {"query": "AAPL"})


def episode(proxy: Proxy, pass_on: bool, llm_faults: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One agent turn: call the tool, then ask the LLM with (or without) the tool's structured answer."""
    proxy.control.scenario("attack", context_attacks=[ATTACK], llm_faults=llm_faults)
    cell = proxy.control.begin()
    result = asyncio.run(asyncio.wait_for(_search(proxy.listeners["mcp"]), 30))
    assert CANARY in json.dumps(result.structured_content), result  # the attack reached the agent's client
    tool = {"role": "tool", "tool_call_id": "c1", "content": json.dumps(result.structured_content)}
    messages = [{"role": "user", "content": "AAPL news?"}, *([tool] if pass_on else [])]
    body = json.dumps({"model": "m", "stream": True, "messages": messages}).encode()
    seen = fetch(proxy.listeners["llm"], "/v1/chat/completions", "POST", body, {"content-type": "application/json"})
    assert seen.status == 200, seen
    return mark_delivery(proxy.control.end(cell), {"llm"})


#: no LLM fault: the LLM request streams through (scanned as it passes); a fault that could fire: it is held whole
HOW = {"streamed": [], "held": [{"mode": "slow", "delay_ms": 1, "probability": 0.0}]}


@pytest.mark.parametrize("how", HOW, ids=list(HOW))
def test_an_agent_that_passes_the_structured_answer_on_delivers_the_attack_to_its_model(world: Proxy, how: str) -> None:
    journal = episode(world, True, HOW[how])
    [attacked] = [r for e in journal if (r := read_fault(e.get("fault"))) and r.kind == "indirect_injection"]
    [call] = [e for e in journal if "llm" in e["targets"]]
    assert call["carries_attacks"] == [0], call
    assert (attacked.applied, attacked.reached_model, attacked.counts) == (True, True, True), attacked
    assert attacked.model_evidence == f"carried by LLM request #{call['seq']} POST {call['url']}"


@pytest.mark.parametrize("how", HOW, ids=list(HOW))
def test_an_agent_that_drops_the_tool_answer_stops_the_attack_at_the_agent(world: Proxy, how: str) -> None:
    journal = episode(world, False, HOW[how])
    [attacked] = [r for e in journal if (r := read_fault(e.get("fault"))) and r.kind == "indirect_injection"]
    assert (attacked.applied, attacked.reached_model, attacked.counts) == (True, False, False), attacked
    assert attacked.model_evidence == "none of the 1 LLM request(s) after the tool answered carried its payload"
    assert attacked.describe().endswith(
        "; did not reach the model (none of the 1 LLM request(s) after the tool answered carried its payload)"
    )


def test_without_an_llm_target_delivery_is_unknown_not_assumed(world: Proxy) -> None:
    journal = episode(world, True, [])
    [attacked] = [r for e in mark_delivery(journal, set()) if (r := read_fault(e.get("fault"))) and r.applied]
    assert attacked.reached_model is True  # already marked above: marking twice changes nothing
    fresh = [{**e, "fault": {**e["fault"], "reached_model": None}} if e.get("fault") else e for e in journal]
    [unknown] = [r for e in mark_delivery(fresh, set()) if (r := read_fault(e.get("fault"))) and r.applied]
    assert unknown.reached_model is None and "sees none of the agent's LLM calls" in str(unknown.model_evidence)
