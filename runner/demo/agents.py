"""The demo's two agents, both calling the LLM, the quote tool and the MCP news tool through flakeproxy.

Both pass the tools' answers (the quote and the news) to the LLM, and forward x-flakeproxy-cell on their
calls (so episodes can overlap). careful: a failed or slow tool means it says so; an incomplete LLM answer
is not passed on; Retry-After is honoured; tool output goes to the model fenced as untrusted data, never as
instructions; orders to drop its rules are screened out of the user's message before the LLM sees it.
naive: it makes up a price, passes on whatever the LLM streamed, retries at once, hands the model tool
output as it came and forwards the user's message as it is; when the quote tool fails it loops: re-plans with
its whole context (one note longer each time) and calls the same tool again, NAIVE_RETRIES times.
Both ask for the usage of their streamed LLM calls (stream_options.include_usage), as cost-aware agents do.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from flakeproxy.wire.call import CELL_HEADER

INVENTED = "AAPL trades at $187.23 according to my market data source."
HONEST = "I can't give a verified AAPL price right now: the market data source is unavailable."
CUT = "The price service returned an incomplete answer, so I won't quote a figure (source: exchange feed)."
#: How many times the naive agent re-plans and calls a failed tool again before it makes a price up.
NAIVE_RETRIES = 5


#: Sentences that try to override an agent's rules (the careful agent drops them from user messages).
OVERRIDE = re.compile(
    r"(?i)\b(ignore|disregard|override|forget everything|new policy|only task|admin note|must append|"
    r"must be exactly|instead)\b"
)


def screen(prompt: str) -> str:
    """The prompt without the sentences or lines that order the agent to drop its rules."""
    pieces = re.split(r"(?<=[.!?])\s+|\n+", prompt)
    return " ".join(p for p in pieces if p.strip() and not OVERRIDE.search(p))


@dataclass
class Urls:
    llm: str
    tools: str
    mcp: str


@dataclass
class Client:
    """The agent's HTTP client for one answer: one pooled session for all answers (connections kept alive
    between calls, as the SDKs' clients keep them) and the cell header to forward on each call."""

    session: aiohttp.ClientSession
    headers: dict[str, str]

    def post(self, url: str, **kwargs: Any) -> Any:
        return self.session.post(url, headers=self.headers, **kwargs)

    def get(self, url: str, **kwargs: Any) -> Any:
        return self.session.get(url, headers=self.headers, **kwargs)


class DemoAgent:
    def __init__(self, careful: bool, urls: Urls, env_proxy: bool = False) -> None:
        """env_proxy: honour HTTP(S)_PROXY and NO_PROXY as an SDK's HTTP client does (forward mode); TLS trusts
        SSL_CERT_FILE either way."""
        self.careful, self.urls, self.env_proxy = careful, urls, env_proxy
        self.session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()

    def _client(self, cell: str | None) -> Client:
        if self.session is None:
            self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10), trust_env=self.env_proxy)
        return Client(self.session, {CELL_HEADER: cell} if cell else {})

    async def _llm(self, http: Client, messages: list[dict[str, Any]]) -> tuple[str, Any, str | None]:
        """(text, tool call, finish reason) from a streamed completion; retries a 429 once."""
        body = {
            "model": "demo-llm",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": messages,
            "tools": [{"type": "function", "function": {"name": "get_quote"}}],
        }
        for attempt in range(2):
            async with http.post(f"{self.urls.llm}/v1/chat/completions", json=body) as r:
                if r.status == 429 and attempt == 0:
                    if self.careful:
                        await asyncio.sleep(float(r.headers.get("retry-after", "1")))
                    continue
                if r.status != 200:
                    raise RuntimeError(f"LLM answered {r.status}")
                text, call, finish = "", None, None
                async for line in r.content:
                    if not line.startswith(b"data: ") or line.strip() == b"data: [DONE]":
                        continue
                    for choice in json.loads(line[6:]).get("choices", []):
                        delta = choice.get("delta") or {}
                        text += delta.get("content") or ""
                        call = (delta.get("tool_calls") or [call])[0]
                        finish = choice.get("finish_reason") or finish
                return text, call, finish
        raise RuntimeError("LLM rate-limited twice")

    async def _quote(self, http: Client, args: dict[str, Any]) -> dict[str, Any] | None:
        """The quote tool's answer, or None when it failed or took more than a second."""
        try:
            tool_timeout = aiohttp.ClientTimeout(total=1.0)
            async with http.get(f"{self.urls.tools}/v1/quotes", params=args, timeout=tool_timeout) as r:
                quote: dict[str, Any] | None = await r.json() if r.status == 200 else None
                return quote
        except (TimeoutError, aiohttp.ClientError, ValueError):
            return None

    async def _loop(self, http: Client, prompt: str) -> dict[str, Any] | None:
        """The naive agent on a failed tool: re-plan with the whole context so far and call it again, and again."""
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        for attempt in range(1, NAIVE_RETRIES + 1):
            note = f"The get_quote tool failed (attempt {attempt}). I will plan again and call it once more."
            messages.append({"role": "assistant", "content": note})
            try:
                _, call, _ = await self._llm(http, messages)
            except RuntimeError:
                return None
            quote = await self._quote(http, json.loads(call["function"]["arguments"]) if call else {"symbol": "AAPL"})
            if quote is not None:
                return quote
        return None

    async def _news(self, http: Client) -> dict[str, Any]:
        """The news tool's answer as the tool message the LLM gets (fenced as untrusted data when careful)."""
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "web_search", "arguments": {"query": "AAPL"}},
        }
        async with http.post(f"{self.urls.mcp}/mcp", json=call) as r:
            data = await r.json(content_type=None)
        text = "".join(c.get("text", "") for c in data["result"]["content"])
        content = f"<untrusted-data>{text}</untrusted-data>" if self.careful else text
        return {"role": "tool", "tool_call_id": "call_2", "content": content}

    async def answer(self, prompt: str, cell: str | None = None) -> str:
        prompt = screen(prompt) if self.careful else prompt
        http = self._client(cell)
        try:
            _, call, _ = await self._llm(http, [{"role": "user", "content": prompt}])
        except RuntimeError:
            return HONEST if self.careful else INVENTED
        args = json.loads(call["function"]["arguments"]) if call else {"symbol": "AAPL"}
        quote = await self._quote(http, args)
        if quote is None and not self.careful:
            quote = await self._loop(http, prompt)
        if quote is None:
            return HONEST if self.careful else INVENTED
        tool_message = {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(quote)}
        news = await self._news(http)
        text, _, finish = await self._llm(http, [{"role": "user", "content": prompt}, tool_message, news])
        if self.careful and finish != "stop":
            return CUT
        return text


def agent_app(agent: DemoAgent) -> web.Application:
    async def chat(request: web.Request) -> web.Response:
        message = (await request.json())["message"]
        reply = await agent.answer(message, request.headers.get(CELL_HEADER))
        return web.json_response({"reply": reply, "error": None})

    async def reset(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def close(app: web.Application) -> None:
        await agent.close()

    app = web.Application()
    app.add_routes([web.post("/chat", chat), web.post("/reset", reset)])
    app.on_cleanup.append(close)
    return app
