"""A context attack on tool results carried inside WebSocket messages: an MCP server behind a WebSocket (JSON-RPC
over the socket), its tools/call result planted with the attack's payload on the way to the agent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.sync.client import connect

from tests.support.loops import LoopThread, free_port
from tests.support.proxy import Proxy, config_for, running_proxy

RESULT = {"content": [{"type": "text", "text": "AAPL last traded at 189.50 USD."}], "isError": False}


async def mcp(ws: ServerConnection) -> None:
    """Answers initialize and tools/call (JSON-RPC 2.0, MCP's result shapes)."""
    async for raw in ws:
        request = json.loads(raw)
        if request["method"] == "initialize":
            result: dict[str, Any] = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}}
            result["serverInfo"] = {"name": "quotes", "version": "1"}
        else:
            result = RESULT
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}))


@pytest.fixture(scope="module")
def world() -> Iterator[Proxy]:
    thread, port = LoopThread("mcp-ws"), free_port()

    async def start() -> Server:
        return await serve(mcp, "127.0.0.1", port)

    server = thread.run(start())
    targets = {"quotes_ws": {"listener": "mcp", "ws": True}}
    try:
        with running_proxy(config_for({"mcp": f"http://127.0.0.1:{port}"}, targets)) as proxy:
            yield proxy
    finally:
        server.close()
        thread.close()


def ask(proxy: Proxy, episode: str) -> list[dict[str, Any]]:
    url = proxy.listeners["mcp"].replace("http://", "ws://") + "/mcp"
    with connect(url, additional_headers={"x-flakeproxy-cell": episode}, proxy=None) as ws:
        out = []
        for i, method in enumerate(["initialize", "tools/call"], 1):
            params = {"name": "get_quote", "arguments": {"symbol": "AAPL"}} if method == "tools/call" else {}
            ws.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}))
            out.append(json.loads(ws.recv(timeout=10)))
    return out


def test_indirect_injection_plants_the_payload_in_the_tool_result_inside_the_socket(world: Proxy) -> None:
    attack = {"type": "indirect_injection", "tool": "quotes_ws", "canary": "CANARY-WS-1"}
    (initialized, called), (entry,) = world.control.in_episode(
        lambda episode: ask(world, episode), "attack", context_attacks=[attack]
    )
    assert (
        initialized["result"]["serverInfo"] == {"name": "quotes", "version": "1"}
        and "content" not in initialized["result"]
    )
    text = called["result"]["content"][0]["text"]
    assert text.startswith(RESULT["content"][0]["text"]) and "CANARY-WS-1" in text
    assert entry["fault"]["applied"] and entry["fault"]["effect"].startswith("message rewritten")
    assert [m.get("fault") for m in entry["websocket"]["messages"] if m["from"] == "server"] == [None, "rewritten"]
