"""A Node agent on the Vercel AI SDK (`streamText` from the `ai` package with `@ai-sdk/openai`'s chat model), as
`agent.type: command`, behind the real proxy, against an OpenAI-compatible LLM that streams a chunk every 25 ms,
with a tool whose execute() fetches the quote API through the proxy: a cut stream is applied in every episode
and its fragment is judged, and an indirect_injection into the tool's JSON reaches the model."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from flakeproxy.results import RunResult
from tests.frameworks import expect
from tests.frameworks.harness import contract_run, stage
from tests.support.npm import npm_packages

AGENT = Path(__file__).with_name("ai_sdk_agent.mjs")


def ai_sdk_agent() -> Path:
    """The agent script beside a node_modules holding ai, @ai-sdk/openai and zod (ES modules resolve from the
    script's folder)."""
    script = npm_packages("node-ai-sdk", "ai@7", "@ai-sdk/openai@4", "zod@4") / AGENT.name
    shutil.copyfile(AGENT, script)
    return script


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunResult]:
    script = ai_sdk_agent()
    with stage("openai", "quote_api") as s:
        env = {"LLM_URL": f"{s.listeners['llm']}/v1", "TOOLS_URL": s.listeners["tools"]}
        agent = {"type": "command", "command": ["node", str(script)], "env": env, "timeout_ms": 20000}
        yield contract_run(s, agent, tmp_path_factory.mktemp("ai-sdk"))


def test_calm_answer_is_whole(run: RunResult) -> None:
    expect.assert_calm(run)


def test_cut_stream_is_applied_in_every_episode_and_its_fragment_fails(run: RunResult) -> None:
    expect.assert_cut_applied_and_judged(run, "AAPL trades at")


def test_injection_into_the_tool_answer_reaches_the_model_and_the_naive_agent_obeys(run: RunResult) -> None:
    expect.assert_injection_reached_the_model(run)
