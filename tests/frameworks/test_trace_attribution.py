"""run.attribution: trace with real OpenTelemetry-instrumented agents behind the real proxy.

The runner opens each episode with a trace of its own and sends its traceparent and baggage with the prompt;
an agent whose HTTP server and clients are instrumented (the official OpenTelemetry packages) carries them to
its LLM and tool calls, so episodes of every scenario overlap and each request is still tied to its own
episode. What propagates by itself was measured here (otel_agent.py says how): the aiohttp server, aiohttp
client and httpx instrumentations do; the openai SDK's own HTTP client does not (the agent injects the
headers itself, or hands the SDK an httpx client). An agent that does not propagate gets its requests
reported unattributed, never guessed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from flakeproxy.wire.trace import trace_id_of
from tests.frameworks.node import proxy_section, world
from tests.frameworks.support import Run, example_config, flakeproxy, read_results

pytest.importorskip("langgraph", reason="LangGraph installs with the dev tools on Python 3.13+ only")
pytest.importorskip("langchain_openai", reason="langchain-openai installs with the dev tools on Python 3.13+ only")
pytest.importorskip("opentelemetry.instrumentation.aiohttp_server", reason="OpenTelemetry: dev tools, 3.13+")

AGENT = Path(__file__).with_name("otel_agent.py")
PROMPTS = ["What is AAPL trading at?", "Quick question: the AAPL price, please?"]
SCENARIOS = ["no-chaos", "quote-tool-down", "llm-rate-limited", "llm-truncated"]


@contextmanager
def served_agent(kind: str, propagation: str, env: dict[str, str]) -> Iterator[str]:
    """otel_agent.py in its own process (its instrumentation patches that process only); yields its URL."""
    llm = env["LLM_URL"].removesuffix("/v1")
    args = [sys.executable, str(AGENT), "--llm", llm, "--tools", env["TOOLS_URL"], "--kind", kind]
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


def agent_stats(url: str) -> dict[str, int]:
    with urllib.request.urlopen(f"{url}/stats", timeout=5) as response:
        stats: dict[str, int] = json.loads(response.read())
    return stats


def trace_config(proxy: dict[str, Any], agent: str, concurrency: int) -> dict[str, Any]:
    config = example_config()
    config["proxy"] = proxy
    config["agent"] = {**config["agent"], "endpoint": f"{agent}/ask", "reset_endpoint": f"{agent}/reset"}
    config["golden_prompts"] = PROMPTS
    config["chaos_matrix"] = [s for s in config["chaos_matrix"] if s["name"] in SCENARIOS]
    config["run"] = {"seed": 7, "concurrency": concurrency, "attribution": "trace"}
    return config


def contract_run(tmp_path: Path, name: str, config: dict[str, Any]) -> Run:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    out = flakeproxy("contract", "run", "-c", str(path), "-o", str(tmp_path / name))
    return read_results(out, tmp_path / name, path)


def verdicts(run: Run) -> list[tuple[str, str, str, list[tuple[str, int, str]]]]:
    """Every cell's outcome and its per-episode verdicts, in matrix order."""
    return [
        (
            c["invariant"],
            c["scenario"],
            c["outcome"],
            [(v["prompt"], v["replica"], v["outcome"]) for v in c["verdicts"]],
        )
        for c in run.results["cells"]
    ]


def answers(run: Run) -> dict[tuple[str, int], str | None]:
    return {(e["scenario"], e["prompt_index"]): e["answer"] for e in run.results["episodes"]}


def trace_ids(entry: dict[str, Any]) -> str | None:
    headers = {k.lower(): v for k, v in entry["request_headers"].items()}
    return trace_id_of(headers.get("traceparent", ""))


def assert_each_request_is_its_episodes(run: Run) -> None:
    """Every request attributed, to the episode that made it: one trace per episode, its own prompt in its
    LLM calls, and no trace shared by two episodes."""
    assert run.results["unattributed_requests"] == 0, run.results["unattributed_journal"][:2]
    seen: dict[str, str] = {}
    for episode in run.results["episodes"]:
        journal = episode["journal"]
        assert journal and episode["unattributed"] == 0, episode
        assert {entry["episode"] for entry in journal} == {episode["cell_id"]}
        (trace,) = {trace_ids(entry) for entry in journal}  # LLM and tool calls alike carried the episode's trace
        assert trace is not None and trace not in seen, (episode["id"], trace, seen.get(trace or ""))
        seen[trace] = episode["id"]
        llm = [e for e in journal if "/chat/completions" in e["url"]]
        assert llm and all(episode["prompt"] in e["request_body"] for e in llm), episode["id"]


@pytest.mark.timeout(240)
def test_instrumented_langgraph_agent_at_concurrency_4_is_attributed_and_judged_as_at_1(tmp_path: Path) -> None:
    with world() as upstream:
        proxy, env = proxy_section(upstream)
        with served_agent("langgraph", "otel", env) as agent:
            serial = contract_run(tmp_path, "serial", trace_config(proxy, agent, 1))
            one_at_a_time = agent_stats(agent)
        with served_agent("langgraph", "otel", env) as agent:
            overlapped = contract_run(tmp_path, "overlapped", trace_config(proxy, agent, 4))
            at_once = agent_stats(agent)
    for run in (serial, overlapped):
        assert run.returncode == 1, run.stdout + run.stderr[-2000:]  # llm-truncated breaks cite-source
        assert run.results["agent_invocations"] == len(SCENARIOS) * len(PROMPTS) == len(run.results["episodes"])
        assert_each_request_is_its_episodes(run)
        assert "could not be attributed" not in run.stderr
    assert one_at_a_time == {"asks": 8, "max_in_flight": 1}
    assert at_once["asks"] == 8 and at_once["max_in_flight"] >= 2, at_once  # episodes really overlapped
    assert verdicts(overlapped) == verdicts(serial)
    assert answers(overlapped) == answers(serial)
    # the scenarios did reach the agent, per episode: a 503 from the tool, one 429 then the answer
    down = overlapped.cell("never-fabricate", "quote-tool-down")
    assert down["outcome"] == "pass" and len(down["verdicts"]) == 2
    for episode in overlapped.episodes("llm-rate-limited"):
        assert [j["status"] for j in episode["journal"] if "/chat/completions" in j["url"]][:2] == [429, 200]
    assert overlapped.cell("waits-retry-after", "llm-rate-limited")["outcome"] == "pass"
    assert overlapped.cell("cite-source", "llm-truncated")["outcome"] == "fail"


JOURNAL_CHECKS = ("waits-retry-after", "few-retries")  # the example contract's checks that read the journal


@pytest.mark.timeout(180)
@pytest.mark.parametrize("propagation", ["none", "sdk-client"])
def test_agent_that_does_not_propagate_gets_its_requests_reported_unattributed(
    tmp_path: Path, propagation: str
) -> None:
    """none: no OpenTelemetry at all; sdk-client: instrumented, but ChatOpenAI on the openai SDK's own HTTP
    client, which the httpx instrumentation does not patch: its tool calls are attributed, its LLM calls not."""
    with world() as upstream:
        proxy, env = proxy_section(upstream)
        with served_agent("langgraph", propagation, env) as agent:
            run = contract_run(tmp_path, "loose", trace_config(proxy, agent, 4))
            at_once = agent_stats(agent)
    assert at_once["max_in_flight"] >= 2, at_once
    loose = run.results["unattributed_journal"]
    assert run.results["unattributed_requests"] == len(loose) > 0
    warning = [line for line in run.stderr.splitlines() if "could not be attributed to an episode" in line]
    assert len(warning) == 1 and "traceparent" in warning[0], run.stderr
    for entry in loose:  # sent while several episodes were open, and none of them claimed by a guess
        assert entry["episode"] is None and len(entry["episode_candidates"]) >= 2, entry
        if propagation == "sdk-client":
            assert "/chat/completions" in entry["url"] and trace_ids(entry) is None, entry
    by_cell = {e["cell_id"]: e for e in run.results["episodes"]}
    for episode in by_cell.values():
        # an episode's journal holds only its own requests (the one open cell, or its trace)
        llm = [e for e in episode["journal"] if "/chat/completions" in e["url"]]
        assert all(episode["prompt"] in e["request_body"] for e in llm), episode["id"]
        expected = sum(episode["cell_id"] in entry["episode_candidates"] for entry in loose)
        assert episode["unattributed"] == expected, (episode["id"], episode["unattributed"], expected)
    concerned = {e["id"] for e in by_cell.values() if e["unattributed"]}
    assert concerned
    for cell in run.results["cells"]:
        judged = {v["episode"]: v for v in cell["verdicts"]}
        for episode_id in concerned & judged.keys():
            if cell["invariant"] in JOURNAL_CHECKS:
                verdict = judged[episode_id]
                assert verdict["outcome"] == "error" and "could not be attributed" in verdict["reason"], verdict
                assert "traceparent" in verdict["reason"], verdict


def small_config(
    proxy: dict[str, Any], agent: dict[str, Any], concurrency: int, chaos: str = "quote-tool-down"
) -> dict[str, Any]:
    """Calm and one scenario, two prompts, the example's targets; one answer check, one journal check."""
    config = example_config()
    config.update(proxy=proxy, agent=agent, golden_prompts=PROMPTS)
    config["contract"]["invariants"] = [
        {"id": "cite-source", "type": "regex", "pattern": "(?i)(source|according to)", "severity": "critical"},
        {"id": "few-retries", "type": "retries_after_fault", "target": "quote_api", "max": 2},
    ]
    config["chaos_matrix"] = [s for s in config["chaos_matrix"] if s["name"] in ("no-chaos", chaos)]
    config["run"] = {"seed": 7, "concurrency": concurrency, "attribution": "trace"}
    return config


def assert_tool_down_reached_its_episodes(run: Run) -> None:
    for episode in run.results["episodes"]:
        quotes = [j["status"] for j in episode["journal"] if "/v1/quotes" in j["url"]]
        assert quotes == ([503] if episode["scenario"] == "quote-tool-down" else [200]), episode


@pytest.mark.timeout(120)
def test_python_agent_with_instrumented_clients_is_attributed_with_no_code_change(tmp_path: Path) -> None:
    shutil.copyfile(AGENT.with_name("otel_python_agent.py"), tmp_path / "otel_python_agent.py")
    stats = tmp_path / "max_in_flight"
    with world() as upstream:
        proxy, env = proxy_section(upstream)
        os.environ.update({**env, "STATS_FILE": str(stats)})  # the agent runs inside the flakeproxy process
        try:
            agent = {"type": "python", "callable": "otel_python_agent:ask", "timeout_ms": 20000}
            # tool faults on a python agent are for the tools it names; this one's tool is on the wire
            run = contract_run(tmp_path, "python", small_config(proxy, agent, 4, "llm-rate-limited"))
        finally:
            for name in (*env, "STATS_FILE"):
                os.environ.pop(name)
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]  # the 429 broke cite-source
    # 4 in the matrix and the calm stateful check (no reset: the run compares two calm answers)
    assert len(run.results["episodes"]) == 5 and int(stats.read_text()) >= 2  # the asks overlapped
    assert_each_request_is_its_episodes(run)
    for episode in run.results["episodes"]:  # the 429 reached the rate-limited episodes, and only those
        limited = episode["scenario"] == "llm-rate-limited"
        assert episode["answer"].endswith("HTTP 429") == limited, episode
    assert run.cell("cite-source", "llm-rate-limited")["outcome"] == "fail"
    assert run.cell("cite-source", "no-chaos")["outcome"] == "pass"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("baggage", [False, True], ids=["traceparent", "traceparent-and-baggage"])
def test_command_agent_that_sends_its_traceparent_is_attributed(tmp_path: Path, baggage: bool) -> None:
    script = AGENT.with_name("traceparent_command.py")
    with world() as upstream:
        proxy, env = proxy_section(upstream)
        env["SEND_BAGGAGE"] = "1" if baggage else "0"
        agent = {"type": "command", "command": [sys.executable, str(script), "{prompt}"], "env": env}
        run = contract_run(tmp_path, "command", small_config(proxy, agent, 4))
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]  # its answer without the quote cites nothing
    assert run.results["unattributed_requests"] == 0
    traces = set()
    for episode in run.results["episodes"]:
        (entry,) = episode["journal"]
        assert entry["episode"] == episode["cell_id"] and episode["answer"].startswith(episode["prompt"])
        traces.add(trace_ids(entry))
        assert ("baggage" in {k.lower() for k in entry["request_headers"]}) == baggage
    assert len(traces) == len(run.results["episodes"]) == 5  # and the calm stateful check (no reset_command)
    assert_tool_down_reached_its_episodes(run)


@pytest.mark.timeout(120)
def test_openai_sdk_agent_that_injects_the_trace_context_is_attributed(tmp_path: Path) -> None:
    """The openai SDK's own HTTP client is not patched by the httpx instrumentation: the agent passes
    extra_headers built with opentelemetry.propagate.inject; its aiohttp server is instrumented."""
    with world() as upstream:
        proxy, env = proxy_section(upstream)
        with served_agent("openai", "otel", env) as url:
            agent = {**example_config()["agent"], "endpoint": f"{url}/ask", "reset_endpoint": f"{url}/reset"}
            run = contract_run(tmp_path, "openai", small_config(proxy, agent, 4))
            at_once = agent_stats(url)
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    assert at_once["asks"] == 4 and at_once["max_in_flight"] >= 2, at_once
    assert_each_request_is_its_episodes(run)
    assert_tool_down_reached_its_episodes(run)
