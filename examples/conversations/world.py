"""The conversations example's world: a fake OpenAI-compatible LLM whose answers depend on the turns before
them. Deterministic, offline, no keys.

It speaks the real chat-completions JSON (usage included) and answers the latest user message from what the
messages before it say, as a model does: "What is AAPL trading at?" -> "AAPL trades at $189.50."; "And in
euros?" -> "AAPL is at 174.34 EUR." only when an earlier message named the stock, else "Which stock do you
mean?"; "Which symbol was that again?" -> "You asked about AAPL." likewise. So a conversation passes only when
its history really reached the model."""

from __future__ import annotations

import re
import time
from typing import Any

from aiohttp import web

ASK_BACK = "Which stock do you mean?"
SYMBOL = re.compile(r"\b(AAPL|MSFT|NVDA)\b")


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


def world_app() -> web.Application:
    app = web.Application()
    app.add_routes([web.post("/v1/chat/completions", chat_completions)])
    return app
