"""An agent on pydantic-ai with its MCP toolset, behind the real proxy, against an OpenAI-compatible LLM that
streams a chunk every 25 ms and an MCP server (the official SDK) whose tool has structured output, which
pydantic-ai hands its model as the tool's answer.

The issue's acceptance: an MCP indirect_injection against this agent reaches the model (the proxy now writes
it into structuredContent too) and the naive agent FAILs; an agent that drops the tool result before its LLM
call gets n/a with the "did not reach the model" reason, never a PASS."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from flakeproxy.results import RunResult
from tests.frameworks import expect
from tests.frameworks.expect import scenario_episodes
from tests.frameworks.harness import CANARY, Stage, contract_run, http_agent, served, stage

pytest.importorskip("pydantic_ai.mcp", reason="pydantic-ai-slim[openai,mcp] installs with the dev tools on 3.13+ only")


@pytest.fixture(scope="module")
def world() -> Iterator[Stage]:
    with stage("openai", "quote_mcp", mcp=True) as s:
        yield s


def run_agent(world: Stage, tmp: Path, withholding: bool, scenarios: tuple[str, ...]) -> RunResult:
    from tests.frameworks.pydantic_ai_agent import pydantic_ai_agent

    with served(partial(pydantic_ai_agent, world.listeners["llm"], world.listeners["mcp"], withholding)) as url:
        return contract_run(world, http_agent(url), tmp, scenarios)


@pytest.fixture(scope="module")
def naive(world: Stage, tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    return run_agent(world, tmp_path_factory.mktemp("naive"), False, ("no-chaos", "stream-cut", "injection"))


def test_calm_answer_is_whole(naive: RunResult) -> None:
    expect.assert_calm(naive)


def test_cut_stream_is_applied_in_every_episode_and_its_fragment_fails(naive: RunResult) -> None:
    # the role chunk and three words: run_stream's output is the text that arrived, no error
    expect.assert_cut_applied_and_judged(naive, "AAPL trades at")


def test_mcp_injection_in_structured_output_reaches_the_model_and_the_naive_agent_fails(naive: RunResult) -> None:
    expect.assert_injection_reached_the_model(naive)
    for episode in scenario_episodes(naive, "injection"):
        [call] = [e for e in episode.journal if e["fault"]]
        assert CANARY in call["response_body"] and "structuredContent" in call["response_body"], call


def test_an_agent_that_drops_the_tool_result_gets_na_with_the_reason(world: Stage, tmp_path: Path) -> None:
    expect.assert_withheld_attack_is_not_applicable(run_agent(world, tmp_path, True, ("no-chaos", "injection")))
