"""A LangGraph ReAct agent served over HTTP (POST /ask {"prompt": ...} -> {"answer": ...}, POST /reset).

The usual LangGraph shape: ChatOpenAI with one tool bound, a model node, a ToolNode and tools_condition
between them. The tool calls a market-data HTTP API. It knows only two base URLs, which flakeproxy's
example points at the proxy's listeners, so every LLM and tool call can be broken on the wire. A failed
tool call becomes a message to the model ("error: ..."), not a crash."""

from __future__ import annotations

from typing import Any

import httpx
from aiohttp import web
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

SYSTEM = "You answer questions about stock prices. Cite your source."


def build_graph(tools_url: str, llm_url: str, stream: bool) -> Any:
    @tool
    async def get_quote(symbol: str) -> str:
        """Get the latest price of a stock symbol from the market data API."""
        try:
            async with httpx.AsyncClient(timeout=5) as client:
                r = await client.get(f"{tools_url}/v1/quotes", params={"symbol": symbol})
        except httpx.HTTPError as e:
            return f"error: the quote API could not be reached ({type(e).__name__})"
        if r.status_code >= 400:
            return f"error: the quote API answered HTTP {r.status_code}"
        return r.text

    llm = ChatOpenAI(  # stream_usage: the streamed answers report their usage (stream_options.include_usage)
        model="fake-model", base_url=f"{llm_url}/v1", api_key="sk-fake", streaming=stream, stream_usage=True, timeout=10
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
    return graph.compile()


def agent_app(tools_url: str, llm_url: str, stream: bool = True) -> web.Application:
    graph = build_graph(tools_url, llm_url, stream)

    async def ask(request: web.Request) -> web.Response:
        prompt = (await request.json())["prompt"]
        state = await graph.ainvoke({"messages": [("user", prompt)]})
        return web.json_response({"answer": state["messages"][-1].content})

    async def reset(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})  # the graph keeps no state between invocations

    app = web.Application()
    app.add_routes([web.post("/ask", ask), web.post("/reset", reset)])
    return app
