"""An agent on the OpenAI Agents SDK (`openai-agents`): `Runner.run_streamed` with a chat-completions model
(an OpenAI-compatible provider, as with any non-OpenAI endpoint) and the quote tool from an MCP server over
Streamable HTTP, read through its structured output (`use_structured_content=True`). It passes the tool's
answer to the model as it is (naive). Its own tracing is off: it would export to OpenAI's servers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

SYSTEM = "You answer questions about stock prices. Cite your source."
Answer = Callable[[str, dict[str, str]], Awaitable[str]]


@asynccontextmanager
async def agents_sdk_agent(llm_url: str, mcp_url: str) -> AsyncIterator[Answer]:
    """The agent's answer function, its OpenAI client open until exit."""
    from agents import OpenAIChatCompletionsModel, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=f"{llm_url}/v1", api_key="sk-fake", max_retries=1, timeout=10)
    model = OpenAIChatCompletionsModel(model="fake-model", openai_client=client)
    async with client:
        yield _answer(model, mcp_url)


def _answer(model: Any, mcp_url: str) -> Answer:
    from agents import Agent, ModelSettings, RunConfig, Runner
    from agents.mcp import MCPServerStreamableHttp

    async def answer(prompt: str, headers: dict[str, str]) -> str:
        params = {"url": f"{mcp_url}/mcp", "headers": headers, "timeout": 10}
        async with MCPServerStreamableHttp(
            params=params,  # type: ignore[arg-type]
            name="quotes",
            use_structured_content=True,
            client_session_timeout_seconds=10,
        ) as quotes:
            agent = Agent(name="quotes", instructions=SYSTEM, model=model, mcp_servers=[quotes])
            config = RunConfig(model_settings=ModelSettings(extra_headers=headers), tracing_disabled=True)
            result = Runner.run_streamed(agent, prompt, run_config=config)
            async for _event in result.stream_events():
                pass  # a UI would render the deltas; the answer is the run's final output
            return str(result.final_output)

    return answer
