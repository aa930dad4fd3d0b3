"""The node agent's world: a fake OpenAI-compatible LLM and a market-data API, one aiohttp app on loopback.
Deterministic, offline, no keys; it stands in for what the agent really calls."""

from __future__ import annotations

from aiohttp import web


async def quotes(request: web.Request) -> web.Response:
    symbol = request.query.get("symbol", "AAPL")
    return web.json_response({"symbol": symbol, "price": 189.5, "currency": "USD", "source": "exchange feed"})


async def chat_completions(request: web.Request) -> web.Response:
    """Chat completions JSON, usage included; the price comes from the quote the agent put in the message."""
    question = (await request.json())["messages"][-1]["content"]
    price = "189.50" if "189.5" in question else "unknown"
    text = f"AAPL trades at ${price} according to the exchange feed (source)."
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    usage = {"prompt_tokens": 20, "completion_tokens": 12, "total_tokens": 32}
    return web.json_response(
        {"id": "chatcmpl-n", "object": "chat.completion", "model": "m", "choices": [choice], "usage": usage}
    )


def world_app() -> web.Application:
    app = web.Application()
    app.add_routes([web.get("/v1/quotes", quotes), web.post("/v1/chat/completions", chat_completions)])
    return app
