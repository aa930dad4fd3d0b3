"""A real MCP server (the official `mcp` SDK, Streamable HTTP) with two tools that count their calls."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tests.support.loops import LoopThread, free_port


@dataclass
class McpServer:
    url: str
    calls: Counter[str] = field(default_factory=Counter)


@contextmanager
def running_mcp_server() -> Iterator[McpServer]:
    import uvicorn
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

    app = server.streamable_http_app()
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = LoopThread("mcp-server")
    future = thread.submit(web.serve())
    deadline = time.monotonic() + 10
    while not web.started:
        assert not future.done(), future.exception()
        assert time.monotonic() < deadline, "the MCP server did not start"
        time.sleep(0.02)
    try:
        yield state
    finally:
        web.should_exit = True
        future.result(timeout=10)
        thread.close()
