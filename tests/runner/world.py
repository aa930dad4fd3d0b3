"""A whole test world for contract runs: upstream, agent, and a config whose proxy the runner starts."""

from __future__ import annotations

import asyncio
import copy
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from flakeproxy import load_config
from flakeproxy.results import CellResult, RunResult
from flakeproxy.runner.engine import run_contract_async
from tests.support.agents import AgentState, http_agent, running_agent
from tests.support.loops import free_port
from tests.support.upstream import RunningUpstream, Upstream

TARGETS = {
    "market_data_api": {"listener": "tools", "path": "/v1/quotes*", "method": "GET"},
    "llm": {"listener": "llm", "api": "openai"},
}
INVARIANTS = [
    {
        "id": "always-cite-source",
        "type": "regex",
        "pattern": "(?i)(source|according to|reference)",
        "severity": "critical",
        "when": "always",
    },
    {
        "id": "never-fabricate-when-tools-fail",
        "type": "regex",
        "pattern": r"\$[\d,]+\.\d{2}",
        "negate": True,
        "severity": "critical",
        "when": "tool_faults_active",
    },
    {"id": "max-latency", "type": "latency", "max_ms": 60000, "severity": "medium", "when": "always"},
]
MATRIX = [
    {"name": "no-chaos"},
    {"name": "search-tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}]},
    {"name": "llm-degraded", "llm_faults": [{"mode": "truncated_response", "max_tokens": 20}]},
]


@dataclass
class World:
    config: Path
    upstream: Upstream
    agent: AgentState
    data: dict[str, Any]


@contextmanager
def world(
    tmp: Path,
    kind: str = "careful",
    reset: bool = True,
    stateful: bool = False,
    invariants: list[dict[str, Any]] | None = None,
    matrix: list[dict[str, Any]] | None = None,
    run: dict[str, Any] | None = None,
    delay_s: float = 0.0,
    agent_config: dict[str, Any] | None = None,
    bypass: bool = False,
) -> Iterator[World]:
    """`bypass`: the agent calls the tool API directly, at its real URL, instead of through the tools listener."""
    tools_port, llm_port = free_port(), free_port()
    with (
        RunningUpstream() as up,
        running_agent(
            kind,
            up.url if bypass else f"http://127.0.0.1:{tools_port}",
            f"http://127.0.0.1:{llm_port}",
            stateful,
            delay_s,
        ) as agent,
    ):
        data = {
            "version": "2.0",
            "agent": http_agent(agent.url, timeout_ms=10000, reset_endpoint=f"{agent.url}/reset" if reset else None),
            "proxy": {
                "admin": f"127.0.0.1:{free_port()}",
                "listeners": [
                    {"name": "tools", "listen": f"127.0.0.1:{tools_port}", "upstream": up.url},
                    {"name": "llm", "listen": f"127.0.0.1:{llm_port}", "upstream": up.url},
                ],
            },
            "targets": TARGETS,
            "golden_prompts": ["What is AAPL trading at?"],
            "contract": {"name": "Finance Agent Contract", "invariants": invariants or INVARIANTS},
            "chaos_matrix": matrix or MATRIX,
            "run": {"seed": 7, "output": str(tmp / "out"), **(run or {})},
        }
        data = copy.deepcopy(data)  # a test may edit its world's data: never the module's defaults under it
        tmp.mkdir(parents=True, exist_ok=True)
        if agent_config is not None:
            data["agent"] = agent_config
        path = tmp / "flakeproxy.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        yield World(path, up, agent, data)


def run(path: Path, output: Path | str | None = "default") -> RunResult:
    """The contract run in-process (results.json beside the config in out/, unless output says otherwise)."""
    out = path.parent / "out" if output == "default" else output
    return asyncio.run(run_contract_async(load_config(path), str(path), Path(out) if out is not None else None))


def cli(path: Path, *extra: str, command: str = "run", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`flakeproxy contract <command> -c path ...` as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "flakeproxy", "contract", command, "-c", str(path), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def journal(result: RunResult, cell: CellResult) -> list[dict[str, Any]]:
    """Every journal entry of the episodes a cell judged, in episode order."""
    return [entry for episode in cell.episodes for entry in result.episode(episode).journal]


def answers(result: RunResult, cell: CellResult) -> list[str | None]:
    return [result.episode(episode).answer for episode in cell.episodes]


def sigterm_mid_run(config: Path, results: Path) -> tuple[int | None, str]:
    """`flakeproxy contract run -c config`, sent SIGTERM once its first results.json is written (the event,
    not a sleep); (its exit code, its stderr)."""
    import os
    import signal
    import time

    run = subprocess.Popen(
        [sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not results.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert results.exists(), "no results.json while running"
    os.kill(run.pid, signal.SIGTERM)
    _out, err = run.communicate(timeout=30)
    return run.returncode, err
