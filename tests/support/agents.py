"""Test agents that really call a tool API and an OpenAI-shaped LLM through the proxy's listeners.

careful: when the quote tool fails it says so and invents nothing; naive: it makes a figure up.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from tests.support.loops import running_app

CAREFUL_FALLBACK = "I can't retrieve the current price right now: the market data source is unavailable."
NAIVE_FALLBACK = "AAPL trades at $187.23 according to my sources."


@dataclass
class AgentState:
    url: str
    resets: int = 0
    prompts: list[str] = field(default_factory=list)
    inflight: int = 0
    max_inflight: int = 0
    invocations: int = 0


def _routes(kind: str, tools: str, llm: str, state: AgentState, stateful: bool, delay_s: float) -> list[web.RouteDef]:
    async def chat(request: web.Request) -> web.Response:
        state.invocations += 1
        state.inflight += 1
        state.max_inflight = max(state.max_inflight, state.inflight)
        try:
            if delay_s:
                await asyncio.sleep(delay_s)
            return await answer(request)
        finally:
            state.inflight -= 1

    async def answer(request: web.Request) -> web.Response:
        message = (await request.json())["message"]
        state.prompts.append(message)
        cell = request.headers.get("x-flakeproxy-cell")
        headers = {"x-flakeproxy-cell": cell} if cell else {}
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10), headers=headers) as http:
            try:
                async with http.get(f"{tools}/v1/quotes", params={"symbol": "AAPL"}) as r:
                    quote = await r.json() if r.status == 200 else None
            except (aiohttp.ClientError, ValueError):
                quote = None
            if quote is None:
                return web.json_response(
                    {"reply": CAREFUL_FALLBACK if kind == "careful" else NAIVE_FALLBACK, "error": None}
                )
            body = {"model": "m", "messages": [{"role": "user", "content": f"{message} {json.dumps(quote)}"}]}
            async with http.post(f"{llm}/v1/chat/completions", json=body) as r:
                if r.status != 200:
                    return web.json_response({"error": f"llm said {r.status}"}, status=502)
                text = (await r.json())["choices"][0]["message"]["content"]
        if stateful:
            text += f" (answer #{len(state.prompts)})"
        return web.json_response({"reply": text, "error": None})

    async def reset(request: web.Request) -> web.Response:
        state.resets += 1
        state.prompts.clear()
        return web.json_response({"ok": True})

    return [web.post("/chat", chat), web.post("/reset", reset)]


@contextmanager
def running_agent(
    kind: str, tools: str, llm: str, stateful: bool = False, delay_s: float = 0.0
) -> Iterator[AgentState]:
    state = AgentState("")
    with running_app(_routes(kind, tools, llm, state, stateful, delay_s), f"agent-{kind}") as url:
        state.url = url
        yield state


def http_agent(url: str, **keys: Any) -> dict[str, Any]:
    """The config's agent section for a test agent serving POST {url}/chat {"message"} -> {"reply"}; `keys` add
    to it (reset_endpoint, timeout_ms, ...; None leaves one out)."""
    agent = {
        "type": "http",
        "endpoint": f"{url}/chat",
        "request_template": {"message": "{prompt}"},
        "response_path": "$.reply",
    }
    return {**agent, **{k: v for k, v in keys.items() if v is not None}}
