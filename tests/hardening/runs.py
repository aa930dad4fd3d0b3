"""A small world for whole contract runs: an HTTP agent that answers given bytes after calling the tools API
through the proxy (with its own Authorization), and a config whose proxy the runner starts itself."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from aiohttp import web

from tests.hardening.hostile import hostile_upstream
from tests.support.agents import http_agent
from tests.support.loops import LoopThread, free_port

KEY = "PLANTED-sk-4f9a1c7e2b"  # the agent's own credential, sent to its tools API


@dataclass
class RunWorld:
    config: Path
    admin: str
    out: Path


def agent_routes(tools: str, answer: bytes, delay_s: float = 0.0) -> list[web.RouteDef]:
    async def chat(request: web.Request) -> web.Response:
        await request.read()
        headers = {"Authorization": f"Bearer {KEY}"}
        if "x-flakeproxy-cell" in request.headers:  # the runner sends it with the prompt; pass it on
            headers["x-flakeproxy-cell"] = request.headers["x-flakeproxy-cell"]
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http,
            http.get(f"{tools}/v1/quotes?symbol=AAPL", headers=headers) as r,
        ):
            await r.read()
        if delay_s:
            await asyncio.sleep(delay_s)
        return web.Response(body=answer, content_type="application/json")

    async def reset(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    return [web.post("/chat", chat), web.post("/reset", reset)]


@contextmanager
def agent_app(routes: list[web.RouteDef]) -> Iterator[str]:
    """The agent on a free loopback port; a request still waiting (a slow answer) is dropped at the end."""
    port, thread = free_port(), LoopThread("agent")

    async def start() -> web.AppRunner:
        app = web.Application()
        app.add_routes(routes)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        return runner

    runner = thread.run(start())
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        thread.run(runner.cleanup())
        thread.close()


@contextmanager
def run_world(tmp: Path, answer: bytes, delay_s: float = 0.0, **agent: Any) -> Iterator[RunWorld]:
    """agent: keys to set in the config's agent section (None drops one)."""
    tools_port, admin = free_port(), f"127.0.0.1:{free_port()}"
    with hostile_upstream() as up, agent_app(agent_routes(f"http://127.0.0.1:{tools_port}", answer, delay_s)) as url:
        data = {
            "version": "2.0",
            "agent": http_agent(url, **{"reset_endpoint": f"{url}/reset", **agent}),
            "proxy": {
                "admin": admin,
                "listeners": [{"name": "tools", "listen": f"127.0.0.1:{tools_port}", "upstream": up}],
            },
            "targets": {"quotes": {"listener": "tools", "path": "/v1/quotes*"}},
            "golden_prompts": ["What is AAPL trading at?", "And MSFT?"],
            "contract": {
                "name": "hardening",
                "invariants": [{"id": "cites", "type": "regex", "pattern": "(?i)source", "severity": "high"}],
            },
            "chaos_matrix": [
                {"name": "no-chaos"},
                {"name": "quotes-down", "tool_faults": [{"tool": "quotes", "mode": "error", "error_code": 503}]},
            ],
            "run": {"seed": 5, "output": str(tmp / "out")},
        }
        config = tmp / "flakeproxy.yaml"
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        yield RunWorld(config, admin, tmp / "out")


def contract_run(world: RunWorld, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(world.config), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=world.config.parent,
    )


def listening(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((host, int(port))) == 0


def wait_closed(address: str, seconds: float) -> bool:
    """True once nothing listens on address (polled against a deadline)."""
    deadline = time.monotonic() + seconds
    while listening(address):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
