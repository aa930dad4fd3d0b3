"""The demo's world for record and replay tests: its upstreams (counting what reaches them) and an agent."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from flakeproxy.runner.demo.agents import DemoAgent, Urls, agent_app
from flakeproxy.runner.demo.services import upstream_app
from flakeproxy.runner.demo.world import INVARIANTS, demo_config
from tests.support.loops import LoopThread, free_port

PROMPTS = ["What is AAPL trading at?", "Give me the current AAPL share price."]


@dataclass
class Counter:
    requests: list[str]


def counting_upstream(counter: Counter) -> web.Application:
    @web.middleware
    async def count(request: web.Request, handler: Any) -> web.StreamResponse:
        counter.requests.append(f"{request.method} {request.path_qs}")
        return await handler(request)

    app = web.Application(middlewares=[count])
    for route in upstream_app().router.routes():
        if route.method != "HEAD":
            app.router.add_route(route.method, route.resource.canonical, route.handler)  # type: ignore[union-attr]
    return app


async def _serve(app: web.Application, port: int) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


@contextmanager
def serving(thread: LoopThread, app: web.Application, port: int | None = None) -> Iterator[int]:
    port = port or free_port()
    runner = thread.run(_serve(app, port))
    try:
        yield port
    finally:
        thread.run(runner.cleanup())


@dataclass
class DemoWorld:
    ports: dict[str, int]
    upstream_port: int
    thread: LoopThread

    def urls(self, tools_path: str = "") -> Urls:
        base = {k: f"http://127.0.0.1:{self.ports[k]}" for k in ("llm", "tools", "mcp")}
        return Urls(base["llm"], base["tools"] + tools_path, base["mcp"])

    def agent(self, tools_path: str = "", careful: bool = True) -> web.Application:
        return agent_app(DemoAgent(careful, self.urls(tools_path)))

    def config(self, folder: Path, agent_port: int, **extra: Any) -> Path:
        data = demo_config(
            f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{self.upstream_port}", self.ports, folder / "out"
        )
        for key in ("invariants", "chaos", "mutations"):
            data.pop(key)
        data.update({"golden_prompts": PROMPTS, "chaos_matrix": [{"name": "no-chaos"}], **extra})
        data["contract"] = {"name": "Finance Agent Contract", "invariants": INVARIANTS}
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "flakeproxy.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path


def new_world(thread: LoopThread) -> DemoWorld:
    ports = {key: free_port() for key in ("admin", "llm", "tools", "mcp")}
    return DemoWorld(ports, free_port(), thread)
