"""A python agent (agent.type: python) whose HTTP clients are instrumented with OpenTelemetry, and nothing else
about tracing: no header, no flakeproxy import. flakeproxy makes the episode's trace the current context while it
calls `ask`, so the instrumented httpx (LLM) and aiohttp (tool) clients carry it. The listener URLs come from
LLM_URL and TOOLS_URL; `stats` counts the asks in flight at once."""

from __future__ import annotations

import os

import aiohttp
import httpx
from opentelemetry.instrumentation.aiohttp_client import AioHttpClientInstrumentor
from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

HTTPXClientInstrumentor().instrument()
AioHttpClientInstrumentor().instrument()

stats = {"in_flight": 0, "max_in_flight": 0}
QUOTE_TOOL = {"type": "function", "function": {"name": "get_quote", "parameters": {"type": "object"}}}


async def ask(prompt: str) -> str:
    stats["in_flight"] += 1
    stats["max_in_flight"] = max(stats["max_in_flight"], stats["in_flight"])
    try:
        async with httpx.AsyncClient(base_url=os.environ["LLM_URL"], timeout=10) as llm:
            messages = [{"role": "user", "content": prompt}]
            reply = await llm.post("/chat/completions", json={"messages": messages, "tools": [QUOTE_TOOL]})
            if reply.status_code >= 400:
                return f"the LLM answered HTTP {reply.status_code}"
            first = reply.json()
            async with (
                aiohttp.ClientSession() as tools,
                tools.get(f"{os.environ['TOOLS_URL']}/v1/quotes", params={"symbol": "AAPL"}) as r,
            ):
                quote = await r.text() if r.status < 400 else f"error: HTTP {r.status}"
            call = first["choices"][0]["message"]["tool_calls"][0]
            messages += [first["choices"][0]["message"], {"role": "tool", "tool_call_id": call["id"], "content": quote}]
            final = (await llm.post("/chat/completions", json={"messages": messages})).json()
        with open(os.environ["STATS_FILE"], "w") as f:  # read by the test once the run is over
            f.write(str(stats["max_in_flight"]))
        return str(final["choices"][0]["message"]["content"])
    finally:
        stats["in_flight"] -= 1
