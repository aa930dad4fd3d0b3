"""The quickstart's agent: an HTTP service (POST /chat {"message": ...} -> {"reply": ...}) that calls a
market-data API and an OpenAI-compatible LLM. It knows only two base URLs, and the quickstart points
them at flakeproxy's listeners, so every call it makes can be broken on the wire.

It is careful: when the quote tool fails it says so instead of inventing a price, and when the model's
answer comes back cut or fails it answers from the tool's data, citing it."""

from __future__ import annotations

import json

import aiohttp
from aiohttp import web

UNAVAILABLE = "I can't retrieve the current price right now: the market data source is unavailable."


def agent_app(tools_url: str, llm_url: str) -> web.Application:
    async def chat(request: web.Request) -> web.Response:
        prompt = (await request.json())["message"]
        timeout = aiohttp.ClientTimeout(total=5)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            try:
                async with http.get(f"{tools_url}/v1/quotes", params={"symbol": "AAPL"}) as r:
                    r.raise_for_status()
                    quote = await r.json()
                price = float(quote["price"])
            except (aiohttp.ClientError, TimeoutError, ValueError, KeyError, TypeError):
                return web.json_response({"reply": UNAVAILABLE})
            fallback = f"The model did not answer fully; according to the market data source AAPL is at ${price:.2f}."
            messages = [{"role": "user", "content": f"{prompt} Tool result: {json.dumps(quote)}"}]
            try:
                async with http.post(f"{llm_url}/v1/chat/completions", json={"model": "m", "messages": messages}) as r:
                    r.raise_for_status()
                    choice = (await r.json())["choices"][0]
            except (aiohttp.ClientError, TimeoutError, ValueError, KeyError, IndexError):
                return web.json_response({"reply": fallback})
        if choice.get("finish_reason") != "stop" or not choice["message"].get("content"):
            return web.json_response({"reply": fallback})
        return web.json_response({"reply": choice["message"]["content"]})

    app = web.Application()
    app.add_routes([web.post("/chat", chat)])
    return app
