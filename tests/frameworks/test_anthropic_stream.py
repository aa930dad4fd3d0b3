"""An agent on the official anthropic SDK's `messages.stream`, behind the real proxy, against an Anthropic-shaped
LLM that streams an event every 25 ms: a cut stream is applied in every episode and its fragment is judged, and
an indirect_injection into the quote API's JSON reaches the model (the agent passes tool results on as they are)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import pytest

from flakeproxy.results import RunResult
from tests.frameworks import expect
from tests.frameworks.harness import contract_run, http_agent, served, stage

pytest.importorskip("anthropic", reason="the anthropic SDK installs with the dev tools on Python 3.13+ only")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunResult]:
    from tests.frameworks.anthropic_agent import anthropic_agent

    with (
        stage("anthropic", "quote_api") as s,
        served(partial(anthropic_agent, s.listeners["llm"], s.listeners["tools"])) as url,
    ):
        yield contract_run(s, http_agent(url), tmp_path_factory.mktemp("anthropic"))


def test_calm_answer_is_whole(run: RunResult) -> None:
    expect.assert_calm(run)


def test_cut_stream_is_applied_in_every_episode_and_its_fragment_fails(run: RunResult) -> None:
    # message_start, content_block_start and two words: messages.stream's final message holds what arrived
    expect.assert_cut_applied_and_judged(run, "AAPL trades")


def test_injection_into_the_tool_answer_reaches_the_model_and_the_naive_agent_obeys(run: RunResult) -> None:
    expect.assert_injection_reached_the_model(run)
