"""A real MCP server (the official `mcp` SDK, Streamable HTTP) with two tools that count their calls."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.support.loops import LoopThread, free_port


@dataclass
class McpServer:
    url: str
    calls: Counter[str] = field(default_factory=Counter)


@contextmanager
def running_mcp_server() -> Iterator[McpServer]:
    from mcp.server.mcpserver import MCPServer

    port = free_port()
    state = McpServer(f"http://127.0.0.1:{port}")
    server = MCPServer("market-tools")

    @server.tool()
    def web_search(query: str) -> str:
        """Search the web."""
        state.calls["web_search"] += 1
        return f"Top result for {query}: AAPL closed at 189.50 (source: exchange feed)"

    @server.tool()
    def get_time() -> str:
        """The current time."""
        state.calls["get_time"] += 1
        return "2026-11-22T10:00:00Z"

    with serving(server.streamable_http_app(), port, "mcp-server"):
        yield state


@contextmanager
def serving(app: Any, port: int, name: str) -> Iterator[None]:
    """An ASGI app (an MCP server's Streamable HTTP app) under uvicorn on a loopback port, in a loop thread."""
    import uvicorn

    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", lifespan="on"))
    thread = LoopThread(name)
    future = thread.submit(web.serve())
    deadline = time.monotonic() + 10
    while not web.started:
        assert not future.done(), future.exception()
        assert time.monotonic() < deadline, "the MCP server did not start"
        time.sleep(0.02)
    try:
        yield
    finally:
        web.should_exit = True
        future.result(timeout=10)
        thread.close()
