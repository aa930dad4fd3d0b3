"""An agent on pydantic-ai: an OpenAI-compatible chat model, streamed (`agent.run_stream`), and the quote tool from
an MCP server through pydantic-ai's MCP toolset (`MCPToolset`, which hands the model a tool's
`structuredContent` when it has one).

naive: the tool's answer goes to the model as it is. withholding: a history processor (ProcessHistory) replaces
every tool result with a note before each model request, as an agent that does not trust its tools' output
might."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

SYSTEM = "You answer questions about stock prices. Cite your source."
WITHHELD = "(the tool's output is withheld from the model: untrusted)"
Answer = Callable[[str, dict[str, str]], Awaitable[str]]


async def withhold_tool_output(messages: list[Any]) -> list[Any]:
    """The conversation with every tool result's content replaced by WITHHELD."""
    from pydantic_ai.messages import ModelRequest, ToolReturnPart

    out = []
    for message in messages:
        if isinstance(message, ModelRequest):
            parts = [
                dataclasses.replace(p, content=WITHHELD) if isinstance(p, ToolReturnPart) else p for p in message.parts
            ]
            message = dataclasses.replace(message, parts=parts)
        out.append(message)
    return out


@asynccontextmanager
async def pydantic_ai_agent(llm_url: str, mcp_url: str, withholding: bool = False) -> AsyncIterator[Answer]:
    """The agent's answer function, its OpenAI client open until exit."""
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=f"{llm_url}/v1", api_key="sk-fake", max_retries=1, timeout=10)
    model = OpenAIChatModel("fake-model", provider=OpenAIProvider(openai_client=client))
    # headers from the run's deps: each run opens its own MCP session, with the episode's x-flakeproxy-cell
    quotes: MCPToolset[dict[str, str]] = MCPToolset(f"{mcp_url}/mcp", headers=lambda ctx: ctx.deps, read_timeout=10)
    agent = Agent(
        model,
        deps_type=dict[str, str],
        instructions=SYSTEM,
        toolsets=[quotes],
        capabilities=[ProcessHistory(withhold_tool_output)] if withholding else [],
    )

    async def answer(prompt: str, headers: dict[str, str]) -> str:
        async with agent.run_stream(prompt, deps=headers, model_settings={"extra_headers": headers}) as result:
            async for _text in result.stream_text():
                pass  # a UI would render the text as it grows; the answer is the run's output
            return str(await result.get_output())

    async with client:
        yield answer
