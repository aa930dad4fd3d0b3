"""A test agent built on the official openai SDK: its LLM calls go through the proxy's listener as a real
client's do (its own retries, Retry-After waits, stream handling). It does not forward x-flakeproxy-cell.

POST /chat {"message": ...}: one LLM call (stream or JSON), then with `steps: 2` a second, different call
that quotes the first answer (a ReAct agent's next step). An SDK error is the agent's HTTP 500. With `together: N`,
N chats wait for each other before their LLM calls and again before they answer: the calls are all made while the
N episodes are open (none can be attributed by elimination).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import yaml
from aiohttp import web

from tests.support.agents import http_agent
from tests.support.loops import free_port, running_app
from tests.support.upstream import RunningUpstream


@dataclass
class SdkAgent:
    url: str
    invocations: int = 0
    resets: int = 0


def _routes(llm: str, state: SdkAgent, stream: bool, steps: int, max_retries: int, together: int) -> list[web.RouteDef]:
    client = openai.AsyncOpenAI(base_url=f"{llm}/v1", api_key="sk-test", max_retries=max_retries, timeout=20)
    gate = asyncio.Barrier(together)

    async def meet() -> None:
        if together > 1:
            await asyncio.wait_for(gate.wait(), 10)

    async def ask(content: str) -> str:
        messages = [{"role": "user", "content": content}]
        if not stream:
            reply = await client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
            return reply.choices[0].message.content or ""
        chunks = await client.chat.completions.create(model="m", messages=messages, stream=True)  # type: ignore[arg-type]
        return "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])

    async def chat(request: web.Request) -> web.Response:
        state.invocations += 1
        message = (await request.json())["message"]
        try:
            await meet()
            text = await ask(message)
            if steps == 2:
                text = await ask(f"Check this answer and restate it: {text}")
            await meet()
        except (openai.APIError, TimeoutError, asyncio.BrokenBarrierError) as e:
            return web.json_response({"error": f"{type(e).__name__}: {e}"}, status=500)
        return web.json_response({"reply": text})

    async def reset(request: web.Request) -> web.Response:
        state.resets += 1
        return web.json_response({"ok": True})

    return [web.post("/chat", chat), web.post("/reset", reset)]


@contextmanager
def running_sdk_agent(
    llm: str, stream: bool = False, steps: int = 1, max_retries: int = 2, together: int = 1
) -> Iterator[SdkAgent]:
    state = SdkAgent("")
    with running_app(_routes(llm, state, stream, steps, max_retries, together), "sdk-agent") as url:
        state.url = url
        yield state


@contextmanager
def sdk_world(
    tmp: Path,
    invariants: list[dict[str, Any]],
    matrix: list[dict[str, Any]],
    run: dict[str, Any] | None = None,
    pricing: dict[str, Any] | None = None,
    **agent: Any,
) -> Iterator[tuple[Path, SdkAgent, RunningUpstream]]:
    """A config (written to tmp/flakeproxy.yaml) for this agent, its LLM calls through a proxy listener to a fake
    OpenAI upstream: the config's path, the agent, the upstream. `run` adds to run: {seed: 3, output: tmp/out}."""
    llm_port = free_port()
    with RunningUpstream() as up, running_sdk_agent(f"http://127.0.0.1:{llm_port}", **agent) as sdk:
        data = {
            "version": "2.0",
            "agent": http_agent(sdk.url, reset_endpoint=f"{sdk.url}/reset", timeout_ms=20000),
            "proxy": {
                "admin": f"127.0.0.1:{free_port()}",
                "listeners": [{"name": "llm", "listen": f"127.0.0.1:{llm_port}", "upstream": up.url}],
            },
            "targets": {"llm": {"listener": "llm", "api": "openai"}},
            "golden_prompts": ["What is AAPL trading at?"],
            "contract": {"name": "sdk", "invariants": invariants},
            "chaos_matrix": matrix,
            "run": {"seed": 3, "output": str(tmp / "out"), **(run or {})},
            **({"pricing": pricing} if pricing is not None else {}),
        }
        tmp.mkdir(parents=True, exist_ok=True)
        path = tmp / "flakeproxy.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        yield path, sdk, up
