"""An agent on the OpenAI Agents SDK (`Runner.run_streamed`, a chat-completions model, an MCP tool read through
its structured output), behind the real proxy, against an OpenAI-compatible LLM that streams a chunk every
25 ms: a cut stream is applied in every episode and its fragment is judged, and an indirect_injection into the
MCP tool's result reaches the model (the agent passes tool results on as they are)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import pytest

from flakeproxy.results import RunResult
from tests.frameworks import expect
from tests.frameworks.harness import contract_run, http_agent, served, stage

pytest.importorskip("agents", reason="openai-agents installs with the dev tools on Python 3.13+ only")
pytest.importorskip("mcp", reason="the mcp SDK installs with the dev tools on Python 3.13+ only")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunResult]:
    from tests.frameworks.agents_sdk_agent import agents_sdk_agent

    with (
        stage("openai", "quote_mcp", mcp=True) as s,
        served(partial(agents_sdk_agent, s.listeners["llm"], s.listeners["mcp"])) as url,
    ):
        yield contract_run(s, http_agent(url), tmp_path_factory.mktemp("agents-sdk"))


def test_calm_answer_is_whole(run: RunResult) -> None:
    expect.assert_calm(run)


def test_cut_stream_is_applied_in_every_episode_and_its_fragment_fails(run: RunResult) -> None:
    # the role chunk and three words: the run's final output is the text that arrived, no error
    expect.assert_cut_applied_and_judged(run, "AAPL trades at")


def test_injection_into_the_mcp_result_reaches_the_model_and_the_naive_agent_obeys(run: RunResult) -> None:
    expect.assert_injection_reached_the_model(run)
