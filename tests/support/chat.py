"""A conversational world: the conversations example's fake OpenAI-compatible LLM (examples/conversations/
world.py: its answer to "And in euros?" needs the turn before it), and an agent on the official openai SDK that
sends the conversation it is given.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from aiohttp import web

TURNS = ["What is AAPL trading at?", "And in euros?", "Which symbol was that again?"]
#: the invariants that need the conversation: turn 2 and 3 make sense only after turn 1
INVARIANTS: list[dict[str, Any]] = [
    {"id": "answers", "type": "completes", "severity": "critical", "turn": "all"},
    {"id": "in-euros", "type": "regex", "pattern": "EUR", "severity": "critical", "turn": 2},
    {"id": "remembers", "type": "regex", "pattern": "AAPL", "severity": "critical", "turn": "all"},
    {"id": "never-asks-back", "type": "regex", "pattern": "Which stock", "negate": True, "turn": "last"},
]
WORLD = Path(__file__).parents[2] / "examples" / "conversations" / "world.py"


def _world() -> Any:
    spec = importlib.util.spec_from_file_location("conversations_world", WORLD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


world = _world()
ASK_BACK: str = world.ASK_BACK


def llm_routes() -> list[web.RouteDef]:
    return [web.post("/v1/chat/completions", world.chat_completions)]


def stateless_agent_routes(llm: str, resets: list[int]) -> list[web.RouteDef]:
    """POST /chat {"messages": [...]} -> {"reply"}: a stateless chat endpoint on the official openai SDK, which
    sends the messages it is given (forwarding x-flakeproxy-cell); POST /reset counts."""
    import openai

    async def chat(request: web.Request) -> web.Response:
        messages = (await request.json())["messages"]
        cell = request.headers.get("x-flakeproxy-cell")
        headers = {"x-flakeproxy-cell": cell} if cell else None
        client = openai.AsyncOpenAI(base_url=f"{llm}/v1", api_key="sk-test", timeout=20, default_headers=headers)
        try:
            reply = await client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        except openai.APIError as e:
            return web.json_response({"reply": None, "error": str(e)}, status=502)
        finally:
            await client.close()
        return web.json_response({"reply": reply.choices[0].message.content})

    async def reset(request: web.Request) -> web.Response:
        resets.append(1)
        return web.json_response({"ok": True})

    return [web.post("/chat", chat), web.post("/reset", reset)]
