"""OpenTelemetry both ways with a real LangGraph agent (official instrumentations) and a real Arize Phoenix server.

Out: `telemetry:` exports flakeproxy's spans to Phoenix; its API returns the agent's trace with flakeproxy's span
of each proxied call as a child of the agent's span that made it, the fault on it, and the verdicts as
`gen_ai.evaluation.result` events. In: the same agent exports to proxy.otlp too; with error recording it passes
`telemetry_noticed` and `time_to_detect` reports milliseconds; with error recording turned off it fails both.
Everything stays on loopback: Phoenix with its telemetry and external resources off, the agent's exporters
pointed at loopback by argument, and no OTEL_* variable passed on to any process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO
from tests.frameworks.node import proxy_section, world
from tests.frameworks.support import Run, example_config, read_results
from tests.support.loops import free_port
from tests.support.phoenix import Phoenix, running_phoenix

pytest.importorskip("langgraph", reason="LangGraph installs with the dev tools on Python 3.13+ only")
pytest.importorskip("opentelemetry.instrumentation.openai_v2", reason="OpenTelemetry: dev tools, 3.13+")

PROMPT = "What is AAPL trading at?"
INVARIANTS = [
    {"id": "answers", "type": "completes", "severity": "high"},
    {"id": "noticed", "type": "telemetry_noticed", "when": "tool_faults_active", "severity": "critical"},
    {"id": "detected-fast", "type": "time_to_detect", "max_ms": 2000, "when": "tool_faults_active"},
]


def clean_env() -> dict[str, str]:
    """The environment without any OTEL_* setting: only what the test says is exported, and only to loopback."""
    return {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")} | {"LANGSMITH_TRACING": "false"}


@contextmanager
def traced_agent(env: dict[str, str], otlp: str, phoenix: Phoenix | None, record_errors: str) -> Iterator[str]:
    llm = env["LLM_URL"].removesuffix("/v1")
    args = ["--llm", llm, "--tools", env["TOOLS_URL"], "--otlp", f"http://{otlp}", "--record-errors", record_errors]
    args += ["--phoenix", phoenix.url] if phoenix else []
    command = [sys.executable, "-m", "tests.telemetry.traced_agent", *args]
    process = subprocess.Popen(command, cwd=REPO, env=clean_env(), stdout=subprocess.PIPE, text=True)
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


def config(proxy: dict[str, Any], agent: str, telemetry: dict[str, Any] | None) -> dict[str, Any]:
    data = example_config()
    data["proxy"] = proxy
    data["agent"] = {**data["agent"], "endpoint": f"{agent}/ask", "reset_endpoint": f"{agent}/reset"}
    data["golden_prompts"] = [PROMPT]
    data["contract"]["invariants"] = INVARIANTS
    data["chaos_matrix"] = [s for s in data["chaos_matrix"] if s["name"] in ("no-chaos", "quote-tool-down")]
    data["run"] = {"seed": 7}
    return data | ({"telemetry": telemetry} if telemetry else {})


def contract_run(folder: Path, data: dict[str, Any]) -> Run:
    folder.mkdir()
    path = folder / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    command = [sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(path), "-o", str(folder / "out")]
    out = subprocess.run(command, capture_output=True, text=True, timeout=90, env=clean_env())
    return read_results(out, folder / "out", path)


def faulted_episode(run: Run) -> dict[str, Any]:
    (episode,) = run.episodes("quote-tool-down")
    return episode


def assert_in_phoenix(phoenix: Phoenix, run: Run) -> None:
    episode = faulted_episode(run)
    trace_id = episode["traceparent"].split("-")[1]
    spans = phoenix.wait_spans(trace_id, lambda spans: any(s["events"] for s in spans))
    by_id = {s["context"]["span_id"]: s for s in spans}
    ours = [s for s in spans if s["attributes"].get("flakeproxy.episode.id") == episode["id"]]
    theirs = [s for s in spans if s not in ours]
    assert theirs and any(s["name"].startswith("chat") for s in theirs), [s["name"] for s in spans]
    tool = next(s for s in ours if s["name"] == "execute_tool quote_api")
    said = tool["attributes"]
    assert (said["flakeproxy.fault.mode"], said["flakeproxy.fault.applied"], tool["status_code"]) == (
        "error",
        True,
        "ERROR",
    )
    assert said["flakeproxy.fault.effect"] and said["flakeproxy.scenario"] == "quote-tool-down"
    assert (said["error.type"], said["gen_ai.operation.name"], said["gen_ai.tool.name"]) == (
        "503",
        "execute_tool",
        "quote_api",
    )
    assert by_id[tool["parent_id"]] in theirs  # the agent's aiohttp client span that made the call
    calls = [s for s in ours if s["name"].startswith("chat ")]
    assert calls and all(by_id[s["parent_id"]] in theirs for s in calls)  # under the agent's httpx spans
    (root,) = [s for s in ours if s["name"].startswith("invoke_agent")]
    assert root["parent_id"] is None and root["context"]["span_id"] == episode["traceparent"].split("-")[2]
    events = {e["attributes"]["gen_ai.evaluation.name"]: e for e in root["events"]}
    assert set(events) == {"answers", "noticed", "detected-fast"}
    assert {e["name"] for e in root["events"]} == {"gen_ai.evaluation.result"}
    noticed = events["noticed"]["attributes"]
    assert (noticed["gen_ai.evaluation.score.label"], noticed["gen_ai.evaluation.score.value"]) == ("pass", 1.0)
    assert "recorded all 1 applied fault" in noticed["gen_ai.evaluation.explanation"]


def detect_ms(run: Run) -> float:
    verdict = run.cell("detected-fast", "quote-tool-down")["verdicts"][0]
    return float(verdict["evidence"]["time_to_detect_ms"])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    with running_phoenix(tmp_path_factory.mktemp("phoenix")) as server:
        yield server


@pytest.mark.timeout(900)  # the first run installs Phoenix (see tests/support/phoenix.py); once installed ~16 s
def test_phoenix_shows_the_fault_in_the_agents_trace_and_the_agents_telemetry_is_judged(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    with ExitStack() as stack:
        upstream = stack.enter_context(world())
        proxy, env = proxy_section(upstream)
        proxy["otlp"] = otlp = f"127.0.0.1:{free_port()}"
        seeing = stack.enter_context(traced_agent(env, otlp, phoenix, "on"))
        blind = stack.enter_context(traced_agent(env, otlp, None, "off"))
        out = {"otlp_endpoint": phoenix.url}
        noticing = contract_run(tmp_path / "records-errors", config(proxy, seeing, out))
        assert_in_phoenix(phoenix, noticing)
        missing = contract_run(tmp_path / "errors-off", config(proxy, blind, None))
    assert noticing.returncode == 0, noticing.stderr[-3000:]
    assert noticing.cell("noticed", "quote-tool-down")["outcome"] == "pass"
    assert noticing.cell("detected-fast", "quote-tool-down")["outcome"] == "pass"
    ms = detect_ms(noticing)
    assert 0 <= ms < 2000, ms
    assert noticing.cell("noticed", "no-chaos")["outcome"] == "not_applicable"
    assert faulted_episode(noticing)["agent_spans"], "the agent's spans came back with the episode"
    assert missing.returncode == 1
    noticed = missing.cell("noticed", "quote-tool-down")
    assert noticed["outcome"] == "fail" and "did not record tool_faults[0] error" in noticed["reason"], noticed
    assert missing.cell("detected-fast", "quote-tool-down")["outcome"] == "fail"


@pytest.mark.timeout(900)
async def test_the_export_speaks_grpc_too(phoenix: Phoenix) -> None:
    """protocol: grpc, to Phoenix's OTLP/gRPC port: the episode's span with its verdict arrives."""
    from flakeproxy import parse_config
    from flakeproxy.results import CellResult, Episode, EpisodeVerdict
    from flakeproxy.runner.telemetry import TelemetryExport
    from flakeproxy.wire.trace import new_trace

    proxy = {**proxy_section("http://127.0.0.1:9")[0], "otlp": f"127.0.0.1:{free_port()}"}
    data = config(proxy, "http://127.0.0.1:9", {"otlp_endpoint": phoenix.grpc})
    data["telemetry"]["protocol"] = "grpc"
    export = TelemetryExport(parse_config(yaml.safe_dump(data), "flakeproxy.yaml"))
    trace = new_trace("e1", "calm", 7, os.urandom(4).hex())
    episode = Episode(
        id="e1", scenario="no-chaos", prompt=PROMPT, prompt_index=0, label="calm", traceparent=trace.traceparent
    )
    await export.begun(episode, "c1")
    await export.ended(episode)
    verdict = EpisodeVerdict(episode="e1", prompt=PROMPT, outcome="pass", reason="the agent answered", score=1.0)
    cell = CellResult(
        invariant="answers", type="completes", scenario="no-chaos", severity="high", when="always", outcome="pass",
        reason="ok", verdicts=[verdict],
    )  # fmt: skip
    export.judged([cell], {"e1": episode})
    assert export.close() is None
    (root,) = phoenix.wait_spans(trace.trace_id, lambda spans: len(spans) == 1)
    assert root["context"]["span_id"] == trace.span_id and root["name"] == "invoke_agent calm"
    (event,) = root["events"]
    assert (event["name"], event["attributes"]["gen_ai.evaluation.name"]) == ("gen_ai.evaluation.result", "answers")
