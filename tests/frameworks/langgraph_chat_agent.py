"""A LangGraph chat agent that keeps each conversation in a checkpointer keyed by thread id, as LangGraph
recommends: POST /threads/{thread_id}/chat {"message"} -> {"reply"} continues that thread; POST /chat starts a
new thread every time (the history dropped). ChatOpenAI calls the LLM at the URL it is given (the proxy)."""

from __future__ import annotations

import uuid
from typing import Any

from aiohttp import web
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import START, MessagesState, StateGraph


def build_graph(llm_url: str) -> Any:
    llm = ChatOpenAI(model="fake-model", base_url=f"{llm_url}/v1", api_key="sk-fake", timeout=10, max_retries=2)

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await llm.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_edge(START, "model")
    return graph.compile(checkpointer=MemorySaver())


def chat_routes(llm_url: str, threads: list[str]) -> list[web.RouteDef]:
    graph = build_graph(llm_url)

    async def chat(request: web.Request) -> web.Response:
        thread = request.match_info.get("thread") or uuid.uuid4().hex
        threads.append(thread)
        message = (await request.json())["message"]
        config: Any = {"configurable": {"thread_id": thread}}
        state = await graph.ainvoke({"messages": [("user", message)]}, config)
        return web.json_response({"reply": state["messages"][-1].content})

    async def reset(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})  # threads are per session: nothing to clear

    return [web.post("/threads/{thread}/chat", chat), web.post("/chat", chat), web.post("/reset", reset)]
