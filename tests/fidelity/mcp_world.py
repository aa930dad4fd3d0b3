"""MCP rows of the fidelity table: a real MCP server (the official `mcp` SDK) whose web_search tool can fail the
ways real servers fail (the tool raises; it raises a JSON-RPC error; the endpoint answers HTTP 503), and the
`mcp` client calling it directly and through flakeproxy with the matching tool fault."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.fidelity.clients import Seen
from tests.support.loops import free_port
from tests.support.mcp_server import serving

TEXT = "Top result for AAPL: AAPL closed at 189.50 (source: exchange feed)"


@dataclass(frozen=True)
class McpRow:
    fault: str
    fail: str  # how the real server fails (McpWorld.fail)
    inject: dict[str, Any]  # the flakeproxy tool fault on web_search
    sees: str


MCP_ROWS = [
    McpRow(
        "is_error",
        "raise",
        {"mode": "is_error", "message": "Error executing tool web_search"},
        "result isError, `Error executing tool web_search`; 1 call",
    ),
    McpRow(
        "jsonrpc_error",
        "mcp_error",
        {"mode": "jsonrpc_error", "code": -32603, "message": "backend exploded"},
        "MCPError `backend exploded`; 1 call",
    ),
    McpRow(
        "error", "http503", {"mode": "error", "error_code": 503}, "MCPError `Server returned an error response`; 1 call"
    ),
]


def summary(seen: Seen, calls: int) -> str:
    head = f"{seen.error} `{seen.content}`" if seen.error else f"result {seen.finish}, `{seen.content}`"
    return f"{head}; {calls} call{'s' if calls != 1 else ''}"


@dataclass
class McpWorld:
    url: str
    fail: str | None = None  # raise, mcp_error, http503
    calls: int = 0


def _http503(app: Any, world: McpWorld) -> Any:
    """ASGI: answer a tools/call with a plain 503 while world.fail says so (an overloaded MCP server)."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or world.fail != "http503" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if b'"tools/call"' in body:
            world.calls += 1
            payload = json.dumps({"error": {"code": 503, "message": "Service unavailable"}}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": payload})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return wrapped


@contextmanager
def running_mcp_world() -> Iterator[McpWorld]:
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.exceptions import MCPError

    port = free_port()
    world = McpWorld(f"http://127.0.0.1:{port}")
    server = MCPServer("market-tools")

    @server.tool()
    def web_search(query: str) -> str:
        """Search the web."""
        world.calls += 1
        if world.fail == "raise":
            raise RuntimeError("search backend down")
        if world.fail == "mcp_error":
            raise MCPError(-32603, "backend exploded")
        return TEXT

    with serving(_http503(server.streamable_http_app(), world), port, "mcp-fidelity"):
        yield world


async def _search(url: str) -> Seen:
    from mcp import Client

    seen = Seen()
    try:
        async with Client(url + "/mcp", read_timeout_seconds=10) as client:
            result = await client.call_tool("web_search", {"query": "AAPL"})
            seen.finish = "isError" if result.is_error else "ok"
            seen.content = "".join(getattr(c, "text", "") for c in result.content)
    except Exception as e:  # the reaction under test: recorded, then compared
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:  # the client's task group wraps it
            e = e.exceptions[0]
        seen.error = type(e).__name__
        seen.content = str(e)[:200]
    return seen


def mcp_search(url: str) -> Seen:
    """The mcp client calling web_search once: what it saw."""
    return asyncio.run(asyncio.wait_for(_search(url), 30))
