"""An agent on LlamaIndex, run as its own process by the python of its own venv (test_llamaindex_agent.py installs
it: llama-index-llms-openai pins openai<3, the dev tools need 3), so it imports nothing from flakeproxy or tests:

    python llamaindex_agent.py --llm URL --tools URL --port N [--withholding]

A `FunctionAgent` (streaming, the framework's default) with `llama_index.llms.openai.OpenAI` pointed at --llm and
one `FunctionTool`, get_quote, that GETs --tools/v1/quotes. Served over HTTP on 127.0.0.1:N as `agent.type: http`:
POST /ask {"prompt"} -> {"answer"} (500 {"error"} when the agent raised), POST /reset. The x-flakeproxy-cell header
an /ask came with goes on that answer's LLM and tool calls. It prints a ready line once it listens and ends on
SIGTERM or when its parent dies.

naive: the tool's answer goes to the model as it is. --withholding: the agent replaces every tool result with a
note before it enters the conversation (FunctionAgent.handle_tool_call_results), so no LLM call carries it, as an
agent that does not trust its tools' output might.

Each answer gets an agent of its own: its LLM's default_headers and its tool carry that episode's header. The
LLM's HTTP client and the tool's session are the agent process's own, closed on exit (LlamaIndex's OpenAI LLM
leaves a client it made itself unclosed)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from typing import Any

import aiohttp
import httpx
from aiohttp import web
from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.tools import FunctionTool, ToolOutput
from llama_index.llms.openai import OpenAI

CELL_HEADER = "x-flakeproxy-cell"
SYSTEM = "You answer questions about stock prices. Cite your source."
WITHHELD = "(the tool's output is withheld from the model: untrusted)"
READY = "llamaindex agent listening on"
PARENT_POLL_S = 0.5


class WithholdingAgent(FunctionAgent):
    """A FunctionAgent that puts WITHHELD in the conversation in place of each tool result."""

    async def handle_tool_call_results(self, ctx: Any, results: list[ToolCallResult], memory: Any) -> None:
        withheld = [
            r.model_copy(update={"tool_output": ToolOutput(r.tool_name, WITHHELD, raw_input=r.tool_kwargs)})
            for r in results
        ]
        await super().handle_tool_call_results(ctx, withheld, memory)


class Agent:
    def __init__(self, llm_url: str, tools_url: str, withholding: bool) -> None:
        self.llm_url, self.tools_url, self.withholding = llm_url, tools_url, withholding
        self.llm_http = httpx.AsyncClient(timeout=10)
        self.tools_http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5))

    async def close(self) -> None:
        await self.llm_http.aclose()
        await self.tools_http.close()

    def quote_tool(self, headers: dict[str, str]) -> FunctionTool:
        async def get_quote(symbol: str) -> str:
            """Get the latest price of a stock symbol from the market data API."""
            url = f"{self.tools_url}/v1/quotes"
            try:
                async with self.tools_http.get(url, params={"symbol": symbol}, headers=headers) as r:
                    text = await r.text()
            except (aiohttp.ClientError, TimeoutError) as e:
                return f"error: the quote API could not be reached ({type(e).__name__})"
            return f"error: the quote API answered HTTP {r.status}" if r.status >= 400 else text

        return FunctionTool.from_defaults(async_fn=get_quote)

    async def answer(self, prompt: str, headers: dict[str, str]) -> str:
        llm = OpenAI(
            model="gpt-4o-mini",  # the fake LLM answers any model; a known name gives LlamaIndex its metadata
            api_base=f"{self.llm_url}/v1",
            api_key="sk-fake",
            max_retries=1,
            timeout=10,
            default_headers=headers,
            async_http_client=self.llm_http,
        )
        kind = WithholdingAgent if self.withholding else FunctionAgent
        agent = kind(tools=[self.quote_tool(headers)], llm=llm, system_prompt=SYSTEM)
        handler = agent.run(user_msg=prompt)
        async for _event in handler.stream_events():
            pass  # a UI would render the AgentStream deltas; the answer is the run's final output
        return str(await handler)


def app(agent: Agent) -> web.Application:
    async def ask(request: web.Request) -> web.Response:
        prompt = (await request.json())["prompt"]
        cell = request.headers.get(CELL_HEADER)
        try:
            return web.json_response({"answer": await agent.answer(prompt, {CELL_HEADER: cell} if cell else {})})
        except Exception as e:  # the agent's own error, reported to the runner as an agent error
            return web.json_response({"error": f"{type(e).__name__}: {e}"}, status=500)

    async def reset(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})  # no state between invocations

    served = web.Application()
    served.add_routes([web.post("/ask", ask), web.post("/reset", reset)])
    return served


async def serve(args: argparse.Namespace) -> None:
    parent, stop = os.getppid(), asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    agent = Agent(args.llm, args.tools, args.withholding)
    runner = web.AppRunner(app(agent), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", args.port).start()
        print(f"{READY} 127.0.0.1:{args.port}", flush=True)
        while not stop.is_set() and os.getppid() == parent:  # re-parented: the test that started it is gone
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), PARENT_POLL_S)
    finally:
        await runner.cleanup()
        await agent.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--llm", required=True, help="the proxy's llm listener (base URL, without /v1)")
    parser.add_argument("--tools", required=True, help="the proxy's tools listener (base URL)")
    parser.add_argument("--port", type=int, required=True, help="the loopback port to serve on")
    parser.add_argument("--withholding", action="store_true", help="drop tool results before the LLM call")
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
