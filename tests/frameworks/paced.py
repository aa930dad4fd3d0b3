"""The framework tests' world on loopback: the gullible LLM (OpenAI chat completions and Anthropic messages)
streaming one event every PACE_S seconds, as a real provider does, a quote API (GET /v1/quotes, JSON) and an
MCP server from the official `mcp` SDK whose get_quote tool has structured output (`structuredContent`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypedDict

from aiohttp import web

from tests.frameworks.gullible import decide
from tests.frameworks.llm_shapes import anthropic_events, anthropic_json, openai_events, openai_json
from tests.support.loops import free_port, running_app

#: Seconds between streamed events: a real provider's token rate (the issue saw 5-50 ms).
PACE_S = 0.025
QUOTE = {"symbol": "AAPL", "price": 189.5, "currency": "USD", "source": "exchange feed"}


@dataclass(frozen=True)
class World:
    upstream: str  # the LLM and the quote API: /v1/chat/completions, /v1/messages, /v1/quotes
    mcp: str  # the MCP server (Streamable HTTP at /mcp)


async def _stream(request: web.Request, events: list[bytes], pace_s: float) -> web.StreamResponse:
    response = web.StreamResponse(headers={"content-type": "text/event-stream", "cache-control": "no-cache"})
    await response.prepare(request)
    try:
        for i, event in enumerate(events):
            if i and pace_s:
                await asyncio.sleep(pace_s)
            await response.write(event)
    except ConnectionResetError:
        pass  # the caller hung up mid-stream (after a cut, say), as clients of a real provider do
    return response


def _llm(pace_s: float) -> Any:
    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        turn = decide(body)
        if not body.get("stream"):
            return web.json_response(openai_json(turn))
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return await _stream(request, openai_events(turn, usage), pace_s)

    async def messages(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        turn = decide(body)
        if not body.get("stream"):
            return web.json_response(anthropic_json(turn))
        return await _stream(request, anthropic_events(turn), pace_s)

    return chat, messages


async def quotes(request: web.Request) -> web.Response:
    return web.json_response({**QUOTE, "symbol": request.query.get("symbol", "AAPL")})


class Quote(TypedDict):
    symbol: str
    price: float
    currency: str
    source: str


@contextmanager
def mcp_server() -> Iterator[str]:
    """The official SDK's MCPServer with get_quote returning a TypedDict: its results carry structuredContent
    (and the same JSON as text). Yields the server's base URL."""
    from mcp.server.mcpserver import MCPServer

    from tests.support.mcp_server import serving

    server = MCPServer("quotes")

    @server.tool()
    def get_quote(symbol: str) -> Quote:
        """Get the latest price of a stock symbol from the market data feed."""
        return Quote(symbol=symbol, price=189.5, currency="USD", source="exchange feed")

    port = free_port()
    with serving(server.streamable_http_app(), port, "mcp-quotes"):
        yield f"http://127.0.0.1:{port}"


@contextmanager
def paced_world(pace_s: float = PACE_S, mcp: bool = False) -> Iterator[World]:
    chat, messages = _llm(pace_s)
    routes = [web.post("/v1/chat/completions", chat), web.post("/v1/messages", messages), web.get("/v1/quotes", quotes)]
    with running_app(routes, "paced-world") as upstream:
        if not mcp:
            yield World(upstream, "")
            return
        with mcp_server() as url:
            yield World(upstream, url)
