"""The attribution recipes (docs/concepts.md) for anthropic-python, each shown on a real anthropic-SDK agent (a
`messages.stream` tool loop, anthropic_agent.py) behind the real proxy, its four episodes overlapping:

- run.attribution: trace. anthropic 2.x sends the current OpenTelemetry context by itself (its own
  `open_telemetry` support), so an agent whose server is instrumented needs nothing more; where the SDK's
  propagation is off, `extra_headers` filled by `opentelemetry.propagate.inject` does it. Off and nothing
  injected, its LLM calls are reported unattributed, never guessed. The old recipe, an instrumented
  `httpx.AsyncClient` as `http_client`, is refused: the SDK sends through httpx2.
- run.attribution: slots. An agent that propagates nothing, one instance per slot of listeners."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from flakeproxy.results import RunResult
from flakeproxy.wire.trace import trace_id_of
from tests.frameworks import expect
from tests.frameworks.harness import Stage, contract_run, http_agent, served, stage

pytest.importorskip("anthropic", reason="the anthropic SDK installs with the dev tools on Python 3.13+ only")
pytest.importorskip("opentelemetry.instrumentation.aiohttp_server", reason="OpenTelemetry: dev tools, 3.13+")

AGENT = Path(__file__).with_name("anthropic_agent.py")
SCENARIOS = ("no-chaos", "injection")


@pytest.fixture(scope="module")
def world() -> Iterator[Stage]:
    with stage("anthropic", "quote_api") as s:
        yield s


@contextmanager
def agent_process(listeners: dict[str, str], propagation: str) -> Iterator[str]:
    """anthropic_agent.py served in its own process (its instrumentation patches that process only)."""
    args = [sys.executable, str(AGENT), "--llm", listeners["llm"], "--tools", listeners["tools"]]
    process = subprocess.Popen([*args, "--propagation", propagation], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = process.stdout.readline().strip()  # printed once it listens (the test's timeout bounds the wait)
        assert port.isdigit(), f"the agent did not start (exit {process.poll()})"
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def trace_run(world: Stage, propagation: str, tmp: Path) -> tuple[RunResult, dict[str, int]]:
    with agent_process(world.listeners, propagation) as url:
        run = contract_run(world, http_agent(url), tmp, SCENARIOS, concurrency=4, attribution="trace")
        with urllib.request.urlopen(f"{url}/stats", timeout=5) as response:
            stats: dict[str, int] = json.loads(response.read())
    return run, stats


def trace_of(entry: dict[str, Any]) -> str | None:
    headers = {k.lower(): v for k, v in entry["request_headers"].items()}
    return trace_id_of(headers.get("traceparent", ""))


def is_llm(entry: dict[str, Any]) -> bool:
    return "/v1/messages" in entry["url"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("propagation", ["sdk", "inject"])
def test_the_recipe_ties_every_request_to_its_episode(world: Stage, tmp_path: Path, propagation: str) -> None:
    run, stats = trace_run(world, propagation, tmp_path)
    assert stats["asks"] == 4 and stats["max_in_flight"] >= 2, stats  # the episodes overlapped
    assert run.unattributed_requests == 0, run.unattributed_journal[:2]
    seen: set[str] = set()
    for episode in run.episodes:
        assert [is_llm(e) for e in episode.journal] == [True, False, True], episode.journal
        assert {e["episode"] for e in episode.journal} == {episode.cell_id}
        (trace,) = {trace_of(e) for e in episode.journal}  # LLM and tool calls carried the episode's trace
        assert trace is not None and trace not in seen, (episode.id, trace)
        seen.add(trace)
    expect.assert_calm(run)
    expect.assert_injection_reached_the_model(run)  # seen in the LLM request the trace tied to the episode


@pytest.mark.timeout(60)
def test_with_its_propagation_off_and_nothing_injected_its_llm_calls_are_unattributed(
    world: Stage, tmp_path: Path
) -> None:
    run, stats = trace_run(world, "off", tmp_path)
    assert stats["max_in_flight"] >= 2, stats
    loose = run.unattributed_journal
    assert run.unattributed_requests == len(loose) > 0
    for entry in loose:  # sent while several episodes were open, and claimed by none of them
        assert is_llm(entry) and trace_of(entry) is None and len(entry["episode_candidates"]) >= 2, entry
        assert entry["request_headers"]["authorization"] == "[redacted]"  # by the proxy; the runner redacts nothing
    tools = [e for episode in run.episodes for e in episode.journal if not is_llm(e)]
    assert len(tools) == 4 and all(trace_of(e) for e in tools)  # the instrumented httpx client's calls were


def test_the_old_recipe_an_httpx_client_is_refused() -> None:
    import httpx
    from anthropic import AsyncAnthropic

    client = httpx.AsyncClient()
    try:
        with pytest.raises(TypeError, match="httpx2"):
            AsyncAnthropic(api_key="sk-ant-fake", http_client=client)  # type: ignore[arg-type]
    finally:
        asyncio.run(client.aclose())


@pytest.mark.timeout(60)
def test_slots_attribute_an_agent_that_forwards_nothing(tmp_path: Path) -> None:
    from tests.frameworks.anthropic_agent import anthropic_agent

    with stage("anthropic", "quote_api", slots=2) as world, ExitStack() as stack:
        urls = [  # one instance per slot, pointed at that slot's listeners, forwarding no header
            stack.enter_context(served(partial(anthropic_agent, slot["llm"], slot["tools"], "off"), forward=False))
            for slot in world.slots
        ]
        agent = {
            **http_agent(urls[0]),
            "slots": [{"endpoint": f"{u}/ask", "reset_endpoint": f"{u}/reset"} for u in urls],
        }
        run = contract_run(world, agent, tmp_path, SCENARIOS, concurrency=2, attribution="slots")
    assert run.unattributed_requests == 0
    for episode in run.episodes:
        assert len(episode.journal) == 3 and {e["episode"] for e in episode.journal} == {episode.cell_id}
        assert len({e["slot"] for e in episode.journal}) == 1 and not any(trace_of(e) for e in episode.journal)
    expect.assert_calm(run)
    expect.assert_injection_reached_the_model(run)
