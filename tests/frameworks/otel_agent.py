"""An agent served over HTTP by aiohttp, run as its own process for tests/frameworks/test_trace_attribution.py:

    python otel_agent.py --llm URL --tools URL --kind langgraph|openai [--propagation otel|sdk-client|none]

POST /ask {"prompt"} -> {"answer"}, POST /reset, GET /stats -> {"asks", "max_in_flight"} (how many /ask it
served at once at most). The first line on stdout is the port it listens on (127.0.0.1, picked by the OS).

- langgraph: a LangGraph ReAct graph, ChatOpenAI (streaming) and one tool that calls the quote API with aiohttp.
- openai: the openai SDK's AsyncOpenAI in a hand-written tool loop; the tool calls the quote API with httpx.

propagation:
- otel: the official OpenTelemetry instrumentations for the aiohttp server (it takes the runner's traceparent
  and baggage as the request's context), the aiohttp client and httpx. ChatOpenAI gets an httpx.AsyncClient
  (http_async_client), which the httpx instrumentation patches; the openai agent passes
  `extra_headers=propagate.inject(...)`, because the SDK's own HTTP client is not patched.
- sdk-client: instrumented as with otel, but the LLM goes through the openai SDK's own HTTP client: its calls
  carry no traceparent (what this file's tests measured with openai 3.x), the tool calls do.
- none: no OpenTelemetry at all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import httpx
from aiohttp import web

SYSTEM = "You answer questions about stock prices. Cite your source."
Answer = Callable[[str], Awaitable[str]]


def instrument() -> None:
    """What a user adds to an aiohttp agent: no TracerProvider needed to propagate (the API's default tracer
    keeps the incoming span context), one would only record spans."""
    from opentelemetry.instrumentation.aiohttp_client import AioHttpClientInstrumentor
    from opentelemetry.instrumentation.aiohttp_server import AioHttpServerInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    AioHttpServerInstrumentor().instrument()  # before web.Application() is created: it adds a middleware
    AioHttpClientInstrumentor().instrument()
    HTTPXClientInstrumentor().instrument()


def propagated() -> dict[str, str]:
    """The current trace context as headers (traceparent, baggage), for a client no instrumentation patches."""
    from opentelemetry import propagate

    headers: dict[str, str] = {}
    propagate.inject(headers)
    return headers


def langgraph_agent(llm_url: str, tools_url: str, patched_client: bool) -> Answer:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    @tool
    async def get_quote(symbol: str) -> str:
        """Get the latest price of a stock symbol from the market data API."""
        try:
            async with (
                aiohttp.ClientSession() as session,
                session.get(f"{tools_url}/v1/quotes", params={"symbol": symbol}) as r,
            ):
                text = await r.text()
        except aiohttp.ClientError as e:
            return f"error: the quote API could not be reached ({type(e).__name__})"
        return f"error: the quote API answered HTTP {r.status}" if r.status >= 400 else text

    client = {"http_async_client": httpx.AsyncClient(timeout=10)} if patched_client else {}
    llm = ChatOpenAI(
        model="fake-model", base_url=f"{llm_url}/v1", api_key="sk-fake", streaming=True, timeout=10, **client
    )
    model = llm.bind_tools([get_quote])

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke([("system", SYSTEM), *state["messages"]])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode([get_quote]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    compiled = graph.compile()

    async def answer(prompt: str) -> str:
        state = await compiled.ainvoke({"messages": [("user", prompt)]})
        return str(state["messages"][-1].content)

    return answer


QUOTE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_quote",
        "description": "Get the latest price of a stock symbol from the market data API.",
        "parameters": {"type": "object", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]},
    },
}


def openai_agent(llm_url: str, tools_url: str, inject: bool) -> Answer:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=f"{llm_url}/v1", api_key="sk-fake", timeout=10)

    async def quote(arguments: str) -> str:
        try:
            async with httpx.AsyncClient(timeout=5) as http:
                r = await http.get(f"{tools_url}/v1/quotes", params=json.loads(arguments))
        except httpx.HTTPError as e:
            return f"error: the quote API could not be reached ({type(e).__name__})"
        return f"error: the quote API answered HTTP {r.status_code}" if r.status_code >= 400 else r.text

    async def answer(prompt: str) -> str:
        messages: list[Any] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
        for _ in range(4):
            extra = propagated() if inject else {}
            reply = await client.chat.completions.create(
                model="fake-model", messages=messages, tools=[QUOTE_TOOL], extra_headers=extra
            )
            message = reply.choices[0].message
            if not message.tool_calls:
                return message.content or ""
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = await quote(call.function.arguments)  # type: ignore[union-attr]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        return "I could not finish."

    return answer


def agent_app(answer: Answer) -> web.Application:
    stats = {"asks": 0, "in_flight": 0, "max_in_flight": 0}

    async def ask(request: web.Request) -> web.Response:
        prompt = (await request.json())["prompt"]
        stats["asks"] += 1
        stats["in_flight"] += 1
        stats["max_in_flight"] = max(stats["max_in_flight"], stats["in_flight"])
        try:
            return web.json_response({"answer": await answer(prompt)})
        finally:
            stats["in_flight"] -= 1

    async def reset(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})  # no state between invocations

    async def report(request: web.Request) -> web.Response:
        return web.json_response({k: stats[k] for k in ("asks", "max_in_flight")})

    app = web.Application()
    app.add_routes([web.post("/ask", ask), web.post("/reset", reset), web.get("/stats", report)])
    return app


async def serve(answer: Answer) -> None:
    runner = web.AppRunner(agent_app(answer), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server = site._server
    assert isinstance(server, asyncio.Server)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()  # until the test terminates the process


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--llm", required=True)
    parser.add_argument("--tools", required=True)
    parser.add_argument("--kind", choices=["langgraph", "openai"], required=True)
    parser.add_argument("--propagation", choices=["otel", "sdk-client", "none"], default="otel")
    args = parser.parse_args()
    if args.propagation != "none":
        instrument()
    own = args.propagation == "otel"
    if args.kind == "langgraph":
        answer = langgraph_agent(args.llm, args.tools, patched_client=own)
    else:
        answer = openai_agent(args.llm, args.tools, inject=own)
    asyncio.run(serve(answer))


if __name__ == "__main__":
    sys.exit(main())
