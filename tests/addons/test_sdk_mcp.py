"""The official `mcp` SDK, client and server, through the proxy: a fault on one tool by name."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK installs beside mitmproxy 12 on Python 3.13+ only")

from mcp import Client

from tests.support.mcp_server import McpServer, running_mcp_server
from tests.support.proxy import Proxy, config_for, running_proxy

TARGETS = {"web_search": {"listener": "mcp", "mcp_tool": "web_search"}, "mcp": {"listener": "mcp"}}


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[McpServer, Proxy]]:
    with running_mcp_server() as server, running_proxy(config_for({"mcp": server.url}, TARGETS)) as proxy:
        yield server, proxy


async def _call_both(url: str) -> tuple[Any, Any]:
    async with Client(url + "/mcp", read_timeout_seconds=10) as client:
        searched = await client.call_tool("web_search", {"query": "AAPL"})
        timed = await client.call_tool("get_time", {})
        return searched, timed


def call_both(proxy: Proxy) -> tuple[Any, Any]:
    return asyncio.run(asyncio.wait_for(_call_both(proxy.listeners["mcp"]), 30))


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_passthrough(world: tuple[McpServer, Proxy]) -> None:
    _server, proxy = world
    proxy.control.scenario(None)
    searched, timed = call_both(proxy)
    assert not searched.is_error and "189.50" in _text(searched)
    assert _text(timed) == "2026-11-22T10:00:00Z"


def test_is_error_on_one_tool_leaves_the_other(world: tuple[McpServer, Proxy]) -> None:
    server, proxy = world
    proxy.control.scenario("s", tool_faults=[{"tool": "web_search", "mode": "is_error", "message": "search down"}])
    before = dict(server.calls)
    cell = proxy.control.begin()
    searched, timed = call_both(proxy)
    journal = proxy.control.end(cell)
    assert searched.is_error and _text(searched) == "search down"
    assert not timed.is_error and _text(timed) == "2026-11-22T10:00:00Z"
    assert server.calls["web_search"] == before.get("web_search", 0)  # answered by the proxy
    assert server.calls["get_time"] == before.get("get_time", 0) + 1
    faulted = [e for e in journal if e["fault"]]
    assert len(faulted) == 1 and faulted[0]["targets"] == ["web_search", "mcp"]


async def _search_fails_then_time(url: str) -> tuple[Exception | None, Any]:
    async with Client(url + "/mcp", read_timeout_seconds=10) as client:
        failure = None
        try:
            await client.call_tool("web_search", {"query": "AAPL"})
        except Exception as e:  # the SDK's error type for a JSON-RPC error answer
            failure = e
        return failure, await client.call_tool("get_time", {})


def test_jsonrpc_error_on_one_tool(world: tuple[McpServer, Proxy]) -> None:
    server, proxy = world
    fault = {"tool": "web_search", "mode": "jsonrpc_error", "code": -32603, "message": "backend exploded"}
    proxy.control.scenario("s", tool_faults=[fault])
    before = dict(server.calls)
    failure, timed = asyncio.run(_search_fails_then_time(proxy.listeners["mcp"]))
    assert failure is not None and "backend exploded" in str(failure), repr(failure)
    assert _text(timed) == "2026-11-22T10:00:00Z"
    assert server.calls["web_search"] == before.get("web_search", 0)


def test_indirect_injection_reaches_the_tool_text(world: tuple[McpServer, Proxy]) -> None:
    _server, proxy = world
    attack = {"type": "indirect_injection", "tool": "web_search", "canary": "CANARY-MCP"}
    proxy.control.scenario("s", context_attacks=[attack])
    searched, timed = call_both(proxy)
    assert "189.50" in _text(searched) and "CANARY-MCP" in _text(searched)
    assert "CANARY" not in _text(timed)


def test_a_path_target_on_an_mcp_server_is_named_with_the_fix(world: tuple[McpServer, Proxy]) -> None:
    """The real client's requests carry MCP's headers; a run warns about a plain target that sees them (a trial's
    max_tool_calls counted initialize and the listings as tool calls: 3 for one get_quote), not an mcp_tool one."""
    import yaml

    from flakeproxy.config.loader import parse_config
    from flakeproxy.judging.calm_checks import mcp_behind_paths
    from flakeproxy.results import Episode

    _server, proxy = world
    proxy.control.scenario(None)
    cell = proxy.control.begin()
    call_both(proxy)
    journal = proxy.control.end(cell)
    data = {
        "version": "2.0",
        "agent": {"type": "http", "endpoint": "http://127.0.0.1:9/chat"},
        "proxy": {"listeners": [{"name": "mcp", "listen": "127.0.0.1:0", "upstream": "http://127.0.0.1:9"}]},
        "targets": TARGETS,
        "golden_prompts": ["p"],
        "contract": {"name": "c", "invariants": [{"id": "a", "type": "completes"}]},
        "chaos_matrix": [{"name": "calm"}],
    }
    config = parse_config(yaml.safe_dump(data))
    episode = Episode(id="e1", scenario="calm", prompt="p", prompt_index=0, label="l", journal=journal)
    assert len(journal) >= 3  # the handshake, the listing, the calls
    assert mcp_behind_paths(config, [episode]) == [
        "warning: target mcp is an MCP server (its requests carry MCP's headers), where initialize, the listings and "
        "each tools/call are all requests: its faults hit the handshake as often as a tool call, and max_tool_calls "
        "counts them all; to fault and count tool calls alone, name each tool as a target, {listener: mcp, "
        "mcp_tool: TOOL_NAME}"
    ]
    no_mcp = [{**e, "request_headers": {"content-type": "application/json"}} for e in journal]
    assert mcp_behind_paths(config, [episode.model_copy(update={"journal": no_mcp})]) == []
