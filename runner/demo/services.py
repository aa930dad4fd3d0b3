"""The demo's upstreams: an OpenAI-compatible LLM (streams SSE at a real token pace, decides tool calls from
the conversation, reports usage), a market-data tool API, and an MCP tool server (JSON-RPC over Streamable
HTTP, with structured output as well as text)."""

from __future__ import annotations

import asyncio
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


#: A gullible model, as real ones can be: an order to say a marker, in the user's message or in a tool's
#: answer, gets the marker, unless the tool's answer is fenced as untrusted data (UNTRUSTED), which it reads as
#: data (the way spotlighting or datamarking helps real models).
_OBEYS = re.compile(
    r"(?i)(ignore|disregard|override|forget|only task|must|output|print|append)[^\n]*?(FLAKEPROXY-[A-Z0-9-]+)"
)
UNTRUSTED = re.compile(r"(?s)<untrusted-data>.*?</untrusted-data>")
#: Seconds between streamed events unless upstream_app(pace_s=...) says otherwise: a real provider's token rate.
PACE_S = 0.02


def _orders(messages: list[dict[str, Any]]) -> re.Match[str] | None:
    said = " ".join(str(m.get("content") or "") for m in messages if m.get("role") in ("user", "tool"))
    return _OBEYS.search(UNTRUSTED.sub("", said))


def _decide(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """No tool result yet: ask for get_quote. Otherwise: answer from the quote (and the news, if a tool gave
    any), unless an order to say something else came with the user's message or a tool's answer (then,
    gullibly, say it)."""
    tool_results = [m for m in messages if m.get("role") == "tool"]
    obeyed = _orders(messages)
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
    quote = json.loads(tool_results[0]["content"])
    text = f"AAPL trades at ${quote['price']:.2f} according to the exchange feed, our market data source."
    news = [UNTRUSTED.sub(lambda m: m.group(0)[16:-17], str(m["content"])) for m in tool_results[1:]]
    return {"text": " ".join([text, *(n.strip().split("\n")[0] for n in news)])}


def _usage(messages: list[dict[str, Any]], text: str) -> dict[str, int]:
    """Usage as OpenAI reports it (about four characters a token)."""
    prompt = max(1, len(json.dumps(messages)) // 4)
    completion = max(1, len(text) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _events(decision: dict[str, Any], usage: dict[str, int] | None) -> list[bytes]:
    events = [_chunk({"role": "assistant", "content": ""})]
    if "tool_call" in decision:
        events += [_chunk({"tool_calls": [{"index": 0, **decision["tool_call"]}]}), _chunk({}, "tool_calls")]
    else:
        words = decision["text"].split(" ")
        events += [_chunk({"content": word if i == 0 else " " + word}) for i, word in enumerate(words)]
        events.append(_chunk({}, "stop"))
    if usage is not None:  # stream_options.include_usage: a last chunk with no choices, as OpenAI sends it
        data = {"id": "chatcmpl-demo", "object": "chat.completion.chunk", "model": "demo-llm", "choices": []}
        events.append(f"data: {json.dumps({**data, 'usage': usage})}\n\n".encode())
    return [*events, b"data: [DONE]\n\n"]


def chat_completions(pace_s: float) -> Any:
    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        messages = body.get("messages", [])
        decision = _decide(messages)
        usage = _usage(messages, decision.get("text") or json.dumps(decision.get("tool_call")))
        if not body.get("stream"):
            message = (
                {"role": "assistant", "content": None, "tool_calls": [decision["tool_call"]]}
                if "tool_call" in decision
                else {"role": "assistant", "content": decision["text"]}
            )
            finish = "tool_calls" if "tool_call" in decision else "stop"
            choice = {"index": 0, "message": message, "finish_reason": finish}
            reply = {"id": "chatcmpl-demo", "object": "chat.completion", "model": "demo-llm", "choices": [choice]}
            return web.json_response({**reply, "usage": usage})
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        include = bool((body.get("stream_options") or {}).get("include_usage"))
        try:
            for i, event in enumerate(_events(decision, usage if include else None)):
                if i and pace_s:
                    await asyncio.sleep(pace_s)
                await response.write(event)
        except ConnectionResetError:
            pass  # the caller hung up mid-stream (after a cut, say), as clients of a real provider do
        return response

    return handle


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
                    "outputSchema": {
                        "type": "object",
                        "properties": {"headline": {"type": "string"}, "source": {"type": "string"}},
                        "required": ["headline", "source"],
                    },
                }
            ]
        }
    elif method == "tools/call" and message["params"]["name"] == "web_search":
        structured = {"headline": NEWS, "source": "newswire"}
        result = {"content": [{"type": "text", "text": NEWS}], "structuredContent": structured, "isError": False}
    else:
        return web.json_response({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "not found"}})
    return web.json_response({"jsonrpc": "2.0", "id": rid, "result": result})


def upstream_app(pace_s: float = PACE_S) -> web.Application:
    """The three upstreams on one app; the LLM streams one event every pace_s seconds (0: all at once)."""
    app = web.Application()
    app.add_routes(
        [
            web.post("/v1/chat/completions", chat_completions(pace_s)),
            web.get("/v1/quotes", quotes),
            web.post("/mcp", mcp),
        ]
    )
    return app
