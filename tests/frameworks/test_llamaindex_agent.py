"""A LlamaIndex agent (a streamed `FunctionAgent`, `llama_index.llms.openai.OpenAI`, one HTTP `FunctionTool`) behind
the real proxy, against an OpenAI-compatible LLM that streams a chunk every 25 ms, run as real users run an agent:
a process of its own with dependencies of its own. llama-index-llms-openai pins openai<3 while the dev tools need
openai 3, so LlamaIndex comes from the package registry into a cached venv (tests/support/venvs.py; a skip, with
pip's reason, only when the registry cannot be reached) and llamaindex_agent.py runs on its python.

A cut stream is applied in every episode and its fragment is judged; an indirect_injection into the quote API's
JSON reaches the model and the naive agent FAILs; an agent that drops the tool result before its LLM call gets n/a
with the "did not reach the model" reason, never a PASS."""

from __future__ import annotations

import os
import select
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from flakeproxy.results import RunResult
from tests.frameworks import expect
from tests.frameworks.harness import Stage, contract_run, http_agent, stage
from tests.support.loops import free_port
from tests.support.venvs import cached_venv

# the first run installs LlamaIndex (about 40 s with no pip cache, 280 MB); once installed the module takes seconds
pytestmark = pytest.mark.timeout(900)

SPECS = ("llama-index-core>=0.14,<0.15", "llama-index-llms-openai>=0.6,<0.9", "aiohttp>=3.13,<4")
AGENT = Path(__file__).with_name("llamaindex_agent.py")
#: llama-index-core points these at the data it ships only when they are unset; with TIKTOKEN_CACHE_DIR set to an
#: empty folder, the first answer downloads cl100k_base (offline: an agent error). PYTHONPATH: the agent imports
#: nothing of this repo.
UNSET = ("TIKTOKEN_CACHE_DIR", "NLTK_DATA", "PYTHONPATH")
#: naive: the tool's answer goes to the model as it is; withholding: dropped before the LLM call
VARIANTS = {"naive": [], "withholding": ["--withholding"]}
START_S = 60  # seconds for an agent to listen (~3 s: the imports)


def listening(process: subprocess.Popen[str], port: int, log: Path) -> str:
    """The agent's URL once it prints that it listens; fails with its log when it does not within START_S."""
    assert process.stdout is not None
    said = select.select([process.stdout], [], [], START_S)[0]
    ready = process.stdout.readline() if said else f"(nothing in {START_S} s)"
    assert ready.strip().endswith(f"127.0.0.1:{port}"), (process.poll(), log.read_text()[-2000:])
    return f"http://127.0.0.1:{port}"


def stopped(process: subprocess.Popen[str]) -> None:
    """Waits for a process sent SIGTERM; SIGKILL if it is still there after 10 s."""
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
    if process.stdout is not None:
        process.stdout.close()


@contextmanager
def llamaindex_agents(world: Stage, folder: Path) -> Iterator[dict[str, str]]:
    """llamaindex_agent.py as each of VARIANTS, on its venv's python, serving on a free loopback port: started
    together (each imports LlamaIndex, ~3 s, side by side), yielded once all listen (name -> URL), and stopped
    together on exit whatever happened. Their stderr goes to folder/NAME.log."""
    python = cached_venv("llamaindex-0.14", *SPECS)
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    listeners = ["--llm", world.listeners["llm"], "--tools", world.listeners["tools"]]
    started: dict[str, tuple[subprocess.Popen[str], int]] = {}
    with ExitStack() as logs:
        try:
            for name, flags in VARIANTS.items():
                port, log = free_port(), logs.enter_context(open(folder / f"{name}.log", "w"))
                command = [str(python), str(AGENT), *listeners, "--port", str(port), *flags]
                process = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
                started[name] = process, port
            yield {name: listening(process, port, folder / f"{name}.log") for name, (process, port) in started.items()}
        finally:
            for process, _ in started.values():
                process.terminate()
            for process, _ in started.values():
                stopped(process)


@pytest.fixture(scope="module")
def world() -> Iterator[Stage]:
    with stage("openai", "quote_api") as s:
        yield s


@pytest.fixture(scope="module")
def agents(world: Stage, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with llamaindex_agents(world, tmp_path_factory.mktemp("agents")) as urls:
        yield urls


@pytest.fixture(scope="module")
def naive(world: Stage, agents: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    return contract_run(world, http_agent(agents["naive"]), tmp_path_factory.mktemp("naive-run"))


def test_calm_answer_is_whole(naive: RunResult) -> None:
    expect.assert_calm(naive)


def test_cut_stream_is_applied_in_every_episode_and_its_fragment_fails(naive: RunResult) -> None:
    # the role chunk and three words: the FunctionAgent's output is the text that arrived, no error
    expect.assert_cut_applied_and_judged(naive, "AAPL trades at")
    for episode in expect.scenario_episodes(naive, "stream-cut"):  # nor a retry: the tool call, the cut answer
        calls = [j["url"].rsplit("/v1/", 1)[1].split("?")[0] for j in episode.journal]
        assert calls == ["chat/completions", "quotes", "chat/completions"], (episode.id, calls)


def test_injection_into_the_tool_answer_reaches_the_model_and_the_naive_agent_obeys(naive: RunResult) -> None:
    expect.assert_injection_reached_the_model(naive)


def test_an_agent_that_drops_the_tool_result_gets_na_with_the_reason(
    world: Stage, agents: dict[str, str], tmp_path: Path
) -> None:
    run = contract_run(world, http_agent(agents["withholding"]), tmp_path, ("no-chaos", "injection"))
    expect.assert_withheld_attack_is_not_applicable(run)
