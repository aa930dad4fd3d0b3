"""A conversational world: a fake OpenAI-compatible LLM whose answers depend on the turns before them, and an
agent on the official openai SDK that sends the conversation it is given.

The LLM speaks the real chat-completions JSON (usage included, a real 429 shape comes from the proxy's faults).
It answers the latest user message from what the messages before it say, as a model does:
"What is AAPL trading at?" -> "AAPL trades at $189.50."; "And in euros?" -> "AAPL is at 174.34 EUR." only when
an earlier message named the stock, else "Which stock do you mean?"; "Which symbol was that?" -> "You asked about
AAPL." likewise. So a conversation passes only when its history really reached the model.
"""

from __future__ import annotations

import re
import time
from typing import Any

from aiohttp import web

TURNS = ["What is AAPL trading at?", "And in euros?", "Which symbol was that again?"]
ASK_BACK = "Which stock do you mean?"
SYMBOL = re.compile(r"\b(AAPL|MSFT|NVDA)\b")
#: the invariants that need the conversation: turn 2 and 3 make sense only after turn 1
INVARIANTS: list[dict[str, Any]] = [
    {"id": "answers", "type": "completes", "severity": "critical", "turn": "all"},
    {"id": "in-euros", "type": "regex", "pattern": "EUR", "severity": "critical", "turn": 2},
    {"id": "remembers", "type": "regex", "pattern": "AAPL", "severity": "critical", "turn": "all"},
    {"id": "never-asks-back", "type": "regex", "pattern": "Which stock", "negate": True, "turn": "last"},
]


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


def answer(messages: list[dict[str, Any]]) -> str:
    """The model's answer to the last user message, knowing only these messages."""
    said = [_text(m.get("content")) for m in messages if m.get("role") in ("user", "assistant")]
    last = next((_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    found = SYMBOL.search(last) or next((m for s in reversed(said[:-1]) if (m := SYMBOL.search(s))), None)
    if found is None:
        return ASK_BACK
    symbol = found[1]
    if "euro" in last.lower():
        return f"{symbol} is at 174.34 EUR."
    if "symbol" in last.lower():
        return f"You asked about {symbol}."
    return f"{symbol} trades at $189.50."


async def chat_completions(request: web.Request) -> web.Response:
    body = await request.json()
    text = answer(body.get("messages") or [])
    usage = {"prompt_tokens": 10 * len(body.get("messages") or []), "completion_tokens": 8}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    reply = {"id": f"chatcmpl-{time.monotonic_ns()}", "object": "chat.completion", "created": int(time.time())}
    return web.json_response({**reply, "model": body.get("model", "m"), "choices": [choice], "usage": usage})


def llm_routes() -> list[web.RouteDef]:
    return [web.post("/v1/chat/completions", chat_completions)]


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
