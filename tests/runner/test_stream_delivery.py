"""Stream faults against an LLM that streams at a real pace count in every episode: the cut or the error event
is applied the moment the agent's stream ends, not when the upstream sends its next event. The demo's agents,
at pace 0 and at 25 ms between events, one at a time and four at once, over several replicas: the naive agent's
partial answer FAILs, the careful one PASSes, and no scenario 'injected nothing'."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from flakeproxy import load_config
from flakeproxy.runner.demo.agents import DemoAgent, Urls, agent_app
from flakeproxy.runner.demo.services import upstream_app
from flakeproxy.runner.engine import run_contract_async
from tests.support.loops import LoopThread, free_port
from tests.support.proxy import running_proxy

PACES = {"pace-0": 0.0, "pace-25ms": 0.025}
REPLICAS = 5
MATRIX = [
    {"name": "stream-cut", "llm_faults": [{"mode": "stream_cut", "after_events": 4, "after_calls": 2}]},
    {"name": "mid-stream-error", "llm_faults": [{"mode": "mid_stream_error", "after_events": 4, "after_calls": 2}]},
]
INVARIANTS = [
    {
        "id": "no-partial-answers",
        "type": "regex",
        "pattern": r"(?i)(trades at \$\d+\.\d{2}|won't quote|can't give)",
        "severity": "high",
        "when": "llm_faults_active",
    }
]


async def _serve(app: Any, port: int) -> Any:
    from aiohttp import web

    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


@pytest.fixture(scope="module", params=list(PACES))
def world(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The demo's upstreams at one pace, a sidecar proxy, and both demo agents calling through it."""
    thread = LoopThread("demo-world")
    ports = {name: free_port() for name in ("upstream", "llm", "tools", "mcp", "careful", "naive")}
    urls = Urls(*(f"http://127.0.0.1:{ports[n]}" for n in ("llm", "tools", "mcp")))
    upstream = f"http://127.0.0.1:{ports['upstream']}"
    runners = [thread.run(_serve(upstream_app(PACES[request.param]), ports["upstream"]))]
    runners += [thread.run(_serve(agent_app(DemoAgent(k == "careful", urls)), ports[k])) for k in ("careful", "naive")]
    base = {
        "version": "2.0",
        "proxy": {
            "admin": f"127.0.0.1:{free_port()}",
            "listeners": [
                {"name": n, "listen": f"127.0.0.1:{ports[n]}", "upstream": upstream} for n in ("llm", "tools", "mcp")
            ],
        },
        "targets": {
            "market_data_api": {"listener": "tools", "path": "/v1/quotes*"},
            "web_search": {"listener": "mcp", "mcp_tool": "web_search"},
            "llm": {"listener": "llm", "api": "openai", "stream": True},
        },
        "golden_prompts": ["What is AAPL trading at?"],
        "contract": {"name": "stream faults", "invariants": INVARIANTS},
        "chaos_matrix": MATRIX,
    }
    try:
        with running_proxy(yaml.safe_dump(base)) as proxy:
            yield {
                "base": base,
                "admin": proxy.control.url,
                "agents": {k: f"http://127.0.0.1:{ports[k]}" for k in ("careful", "naive")},
            }
    finally:
        for runner in runners:
            thread.run(runner.cleanup())
        thread.close()


def contract_run(world: dict[str, Any], kind: str, concurrency: int, tmp: Path) -> Any:
    agent = world["agents"][kind]
    data = {
        **world["base"],
        "agent": {"type": "http", "endpoint": f"{agent}/chat", "request_template": {"message": "{prompt}"},
                  "response_path": "$.reply", "timeout_ms": 10000, "reset_endpoint": f"{agent}/reset"},
        "proxy": {**world["base"]["proxy"], "admin_url": world["admin"]},
        "run": {"seed": 7, "replicas": REPLICAS, "concurrency": concurrency, "attribution": "header"},
    }  # fmt: skip
    path = tmp / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(data))
    return asyncio.run(run_contract_async(load_config(path), str(path), tmp / "out"))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("kind", ["careful", "naive"])
def test_stream_faults_apply_in_every_episode_and_the_partial_answer_is_judged(
    world: dict[str, Any], kind: str, concurrency: int, tmp_path: Path
) -> None:
    result = contract_run(world, kind, concurrency, tmp_path)
    for cov in result.coverage:
        assert (cov.episodes, cov.decided, cov.applied) == (REPLICAS, REPLICAS, REPLICAS), cov
        assert not cov.injected_nothing and cov.unattributed == 0, cov
    for episode in result.episodes:
        [fault] = episode.faults(applied=None)
        assert fault.applied and fault.settled and episode.unsettled == 0, (episode.id, fault)
    want = "fail" if kind == "naive" else "pass"
    for scenario in ("stream-cut", "mid-stream-error"):
        cell = result.cell("no-partial-answers", scenario)
        assert cell.outcome == want, (scenario, cell.reason)
        assert [v.outcome for v in cell.verdicts] == [want] * REPLICAS, cell.verdicts
