"""An agent on the official anthropic SDK: a tool loop whose every model turn is `client.messages.stream(...)`
(the SDK's streaming helper; its final message is what the stream delivered), and one tool that GETs the
quote API with httpx. It passes the tool's answer to the model as it is (naive). `headers` given to an answer
(x-flakeproxy-cell) go on its LLM and tool calls.

Trace propagation (run.attribution: trace), as measured with anthropic 2.12:
- sdk: anthropic 2.x sends the current OpenTelemetry context (traceparent, baggage) with each request by itself
  (its `open_telemetry` option, `propagation` on by default); instrument the agent's server so the runner's
  trace is the current context, and that is all.
- inject: the recipe where the SDK's own propagation is off (`open_telemetry={"propagation": False}`, or
  ANTHROPIC_OPEN_TELEMETRY_PROPAGATION=false): pass `extra_headers` filled by `opentelemetry.propagate.inject`.
- off: its propagation off and nothing injected: its LLM calls carry no trace.
The recipe it replaces, an instrumented `httpx.AsyncClient` as `http_client`, cannot work: anthropic 2.x sends
through `httpx2` (which the httpx instrumentation does not patch) and refuses an httpx client with a TypeError.

Run as a script, it is served over HTTP by otel_agent.py's app, its server and httpx client instrumented:
    python anthropic_agent.py --llm URL --tools URL --propagation sdk|inject|off|none
(none: no OpenTelemetry at all)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

import httpx

SYSTEM = "You answer questions about stock prices. Cite your source."
QUOTE_TOOL = {
    "name": "get_quote",
    "description": "Get the latest price of a stock symbol from the market data API.",
    "input_schema": {"type": "object", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]},
}
Answer = Callable[[str, dict[str, str]], Awaitable[str]]
Propagation = Literal["sdk", "inject", "off"]


def propagated() -> dict[str, str]:
    """The current trace context as headers (traceparent, baggage)."""
    from opentelemetry import propagate

    headers: dict[str, str] = {}
    propagate.inject(headers)
    return headers


@asynccontextmanager
async def anthropic_agent(llm_url: str, tools_url: str, propagation: Propagation = "sdk") -> AsyncIterator[Answer]:
    """The agent's answer function, its SDK client open (one client, its connections pooled) until exit."""
    from anthropic import AsyncAnthropic

    telemetry: Any = None if propagation == "sdk" else {"propagation": False}  # None: the SDK's default
    async with AsyncAnthropic(
        base_url=llm_url, api_key="sk-ant-fake", max_retries=1, timeout=10, open_telemetry=telemetry
    ) as client:
        yield _answer(client, tools_url, inject=propagation == "inject")


def _answer(client: Any, tools_url: str, inject: bool) -> Answer:

    async def quote(arguments: Any, headers: dict[str, str]) -> str:
        try:
            async with httpx.AsyncClient(timeout=5) as http:
                r = await http.get(f"{tools_url}/v1/quotes", params=arguments, headers=headers)
        except httpx.HTTPError as e:
            return f"error: the quote API could not be reached ({type(e).__name__})"
        return f"error: the quote API answered HTTP {r.status_code}" if r.status_code >= 400 else r.text

    async def answer(prompt: str, headers: dict[str, str]) -> str:
        messages: list[Any] = [{"role": "user", "content": prompt}]
        for _ in range(4):
            extra = {**headers, **(propagated() if inject else {})}
            async with client.messages.stream(
                model="fake-model", max_tokens=256, system=SYSTEM, messages=messages, tools=[QUOTE_TOOL],
                extra_headers=extra,
            ) as stream:  # fmt: skip
                final = await stream.get_final_message()
            calls = [block for block in final.content if block.type == "tool_use"]
            if not calls:
                return "".join(block.text for block in final.content if block.type == "text")
            messages.append({"role": "assistant", "content": [block.model_dump() for block in final.content]})
            results = [
                {"type": "tool_result", "tool_use_id": call.id, "content": await quote(call.input, headers)}
                for call in calls
            ]
            messages.append({"role": "user", "content": results})
        return "I could not finish."

    return answer


def main() -> None:
    from otel_agent import instrument, serve  # this folder is on sys.path when run as a script

    parser = argparse.ArgumentParser()
    parser.add_argument("--llm", required=True)
    parser.add_argument("--tools", required=True)
    parser.add_argument("--propagation", choices=["sdk", "inject", "off", "none"], required=True)
    args = parser.parse_args()
    if args.propagation != "none":
        instrument()
    propagation = "sdk" if args.propagation == "none" else args.propagation

    async def run() -> None:
        async with anthropic_agent(args.llm, args.tools, propagation) as answer:

            async def ask(prompt: str) -> str:
                return await answer(prompt, {})

            await serve(ask)

    asyncio.run(run())


if __name__ == "__main__":
    sys.exit(main())
