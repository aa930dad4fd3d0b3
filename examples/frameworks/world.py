"""The framework example's world: a fake OpenAI-compatible LLM and a market-data API, one aiohttp app on
loopback. Deterministic, offline, no keys.

The LLM speaks the real chat-completions JSON and SSE, tool calls included, and behaves like a careful
model: offered tools and no tool result yet, it calls the first tool; given a tool result with a price, it
answers with that price and cites the source; otherwise it says it cannot give a price."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from aiohttp import web

PRICE = re.compile(r"""["']?price["']?\s*[:=]\s*["']?([0-9]+(?:\.[0-9]+)?)""")
UNAVAILABLE = "I cannot get a quote right now: the market data source is unavailable, so I will not guess."


def decide(body: dict[str, Any]) -> dict[str, Any]:
    """{"tool_call": {...}} or {"text": "..."} for this conversation."""
    messages = body.get("messages", [])
    tools = body.get("tools") or []
    results = [m for m in messages if m.get("role") == "tool"]
    if tools and not results:
        name = tools[0]["function"]["name"]
        arguments = json.dumps({"symbol": "AAPL"})
        return {"tool_call": {"id": f"call_{len(messages)}", "type": "function",
                              "function": {"name": name, "arguments": arguments}}}  # fmt: skip
    content = results[-1].get("content", "") if results else ""
    found = PRICE.search(content if isinstance(content, str) else json.dumps(content))
    if found is None:
        return {"text": UNAVAILABLE}
    return {"text": f"AAPL trades at ${float(found[1]):.2f} according to the exchange feed (source)."}


def _usage(body: dict[str, Any], decision: dict[str, Any]) -> dict[str, int]:
    """Usage as OpenAI reports it, following the request (about four characters a token), so each call's differs."""
    prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
    completion = max(1, len(decision.get("text") or json.dumps(decision.get("tool_call"))) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _reported(usage: dict[str, int]) -> dict[str, str]:
    """The usage this answer reports, also in a header (`x-reported-usage: prompt,completion`), so a test can add
    up what the fake reported whether or not the client asked for it (include_usage)."""
    return {"x-reported-usage": f"{usage['prompt_tokens']},{usage['completion_tokens']}"}


def _event(model: str, choices: list[dict[str, Any]], **extra: Any) -> bytes:
    data = {"id": "chatcmpl-fw", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    return f"data: {json.dumps({**data, 'choices': choices, **extra})}\n\n".encode()


def _delta(model: str, delta: dict[str, Any], finish: str | None = None) -> bytes:
    return _event(model, [{"index": 0, "delta": delta, "finish_reason": finish}])


async def chat_completions(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    model = body.get("model", "fake-model")
    decision = decide(body)
    finish = "tool_calls" if "tool_call" in decision else "stop"
    usage = _usage(body, decision)
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": decision.get("text")}
        if "tool_call" in decision:
            message["tool_calls"] = [decision["tool_call"]]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        reply = {"id": "chatcmpl-fw", "object": "chat.completion", "created": int(time.time()), "model": model}
        return web.json_response({**reply, "choices": [choice], "usage": usage}, headers=_reported(usage))
    response = web.StreamResponse(headers={"content-type": "text/event-stream", **_reported(usage)})
    await response.prepare(request)
    await response.write(_delta(model, {"role": "assistant", "content": ""}))
    if "tool_call" in decision:
        call, arguments = decision["tool_call"], decision["tool_call"]["function"]["arguments"]
        head = {**call, "index": 0, "function": {"name": call["function"]["name"], "arguments": ""}}
        await response.write(_delta(model, {"tool_calls": [head]}))
        for piece in (arguments[:8], arguments[8:]):
            await response.write(_delta(model, {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    else:
        for i, word in enumerate(decision["text"].split(" ")):
            await response.write(_delta(model, {"content": word if i == 0 else " " + word}))
    await response.write(_delta(model, {}, finish))
    if (body.get("stream_options") or {}).get("include_usage"):
        await response.write(_event(model, [], usage=usage))
    await response.write(b"data: [DONE]\n\n")
    return response


async def quotes(request: web.Request) -> web.Response:
    symbol = request.query.get("symbol", "AAPL")
    return web.json_response({"symbol": symbol, "price": 189.5, "currency": "USD", "source": "exchange feed"})


def world_app() -> web.Application:
    app = web.Application()
    app.add_routes([web.post("/v1/chat/completions", chat_completions), web.get("/v1/quotes", quotes)])
    return app


if __name__ == "__main__":
    import sys

    web.run_app(world_app(), host="127.0.0.1", port=int(sys.argv[1]), print=None)
