"""The demo's upstreams: an OpenAI-compatible LLM (streams SSE, decides tool calls from the
conversation), a market-data tool API, and an MCP tool server (JSON-RPC over Streamable HTTP)."""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web

PRICE = 189.50
NEWS = "Apple shares rose 1.2% after the keynote (source: newswire)."


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    data = {
        "id": "chatcmpl-demo",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "demo-llm",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(data)}\n\n".encode()


#: A gullible model, as real ones can be: a user message that orders it to say a marker gets the marker.
_OBEYS = re.compile(
    r"(?i)(ignore|disregard|override|forget|only task|must|output|print|append)[^\n]*?(FLAKEPROXY-[A-Z0-9-]+)"
)


def _decide(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """No tool result yet: ask for get_quote. Otherwise: answer from the tool result, unless the user's
    message injected an order to say something else (then, gullibly, say it)."""
    tool_results = [m for m in messages if m.get("role") == "tool"]
    users = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    obeyed = _OBEYS.search(users)
    if tool_results and obeyed:
        return {"text": f"Sure. {obeyed.group(2)}"}
    if not tool_results:
        return {
            "tool_call": {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_quote", "arguments": json.dumps({"symbol": "AAPL"})},
            }
        }
    quote = json.loads(tool_results[-1]["content"])
    return {"text": f"AAPL trades at ${quote['price']:.2f} according to the exchange feed, our market data source."}


async def chat_completions(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    decision = _decide(body.get("messages", []))
    if not body.get("stream"):
        message = (
            {"role": "assistant", "content": None, "tool_calls": [decision["tool_call"]]}
            if "tool_call" in decision
            else {"role": "assistant", "content": decision["text"]}
        )
        finish = "tool_calls" if "tool_call" in decision else "stop"
        return web.json_response(
            {
                "id": "chatcmpl-demo",
                "object": "chat.completion",
                "model": "demo-llm",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            }
        )
    response = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await response.prepare(request)
    await response.write(_chunk({"role": "assistant", "content": ""}))
    if "tool_call" in decision:
        await response.write(_chunk({"tool_calls": [{"index": 0, **decision["tool_call"]}]}))
        await response.write(_chunk({}, "tool_calls"))
    else:
        for i, word in enumerate(decision["text"].split(" ")):
            await response.write(_chunk({"content": word if i == 0 else " " + word}))
        await response.write(_chunk({}, "stop"))
    await response.write(b"data: [DONE]\n\n")
    return response


async def quotes(request: web.Request) -> web.Response:
    return web.json_response(
        {"symbol": request.query.get("symbol", "AAPL"), "price": PRICE, "currency": "USD", "source": "exchange feed"}
    )


async def mcp(request: web.Request) -> web.Response:
    message = await request.json()
    method, rid = message.get("method"), message.get("id")
    if rid is None:  # a notification
        return web.Response(status=202)
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "demo-news", "version": "1"},
        }
    elif method == "tools/list":
        result = {
            "tools": [
                {
                    "name": "web_search",
                    "description": "Search the news",
                    "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
                }
            ]
        }
    elif method == "tools/call" and message["params"]["name"] == "web_search":
        result = {"content": [{"type": "text", "text": NEWS}], "isError": False}
    else:
        return web.json_response({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "not found"}})
    return web.json_response({"jsonrpc": "2.0", "id": rid, "result": result})


def upstream_app() -> web.Application:
    app = web.Application()
    app.add_routes(
        [web.post("/v1/chat/completions", chat_completions), web.get("/v1/quotes", quotes), web.post("/mcp", mcp)]
    )
    return app
