"""What a contract matrix costs in each run mode, side by side in one run of this script: 10 scenarios x 2
prompts x 3 replicas (60 episodes) x 3 invariants, against an agent that takes 200 ms per answer (the real
proxy and runner).

Run: .venv/bin/python bench/matrix.py [--repeat N]

Modes: per-cell (run.isolation: cell: each invariant x scenario cell invokes the agent itself) and episode
mode one at a time; then 8 at once, of any scenarios, attributed three ways: the agent forwards
x-flakeproxy-cell (header), or the W3C traceparent it was sent (trace), or forwards nothing and 8 replicas
each call their own slot's listeners (slots: proxy.slots 8, agent.slots).

Columns: invocations (agent runs, each one paid on a real LLM), wall (the whole run, with the proxy's start
and stop), episodes (the episode phase: first agent call received to last answered, timed by the agent,
which runs in its own process with the tool API),
ideal (invocations x latency / at once), x ideal (episodes / ideal), vs cell (per-cell one at a time's
episode phase / this one's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, ClientTimeout, web

from flakeproxy import load_config
from flakeproxy.runner.engine import run_contract_async

LATENCY_S = 0.2
PROMPTS, REPLICAS, INVARIANTS, AT_ONCE = 2, 3, 3, 8
FAULTS: list[dict[str, Any]] = [
    {"mode": "error", "error_code": 500},
    {"mode": "error", "error_code": 502},
    {"mode": "error", "error_code": 503},
    {"mode": "error", "error_code": 504},
    {"mode": "rate_limit"},
    {"mode": "slow", "delay_ms": 1},
    {"mode": "slow", "delay_ms": 5},
    {"mode": "error", "error_code": 503, "probability": 0.5},
    {"mode": "error", "error_code": 500, "after_calls": 1, "times": 1},
]
SCENARIOS = 1 + len(FAULTS)
#: the request headers each mode's agent forwards on its tool call (slots: none)
FORWARDS = {"header": ("x-flakeproxy-cell",), "trace": ("traceparent", "baggage"), "none": ()}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Agent:
    """The bench agent: one tool call through the proxy, then 200 ms of 'thinking'; it times its answers."""

    tools: str
    forward: tuple[str, ...] = ()
    spans: list[tuple[float, float]] = field(default_factory=list)  # (received, answered), monotonic
    session: ClientSession | None = None

    async def chat(self, request: web.Request) -> web.Response:
        start = time.monotonic()
        if self.session is None:
            self.session = ClientSession(timeout=ClientTimeout(total=10))
        headers = {h: request.headers[h] for h in self.forward if h in request.headers}
        async with self.session.get(f"{self.tools}/v1/quotes", headers=headers) as r:
            status = r.status
            await r.read()
        await asyncio.sleep(LATENCY_S)
        self.spans.append((start, time.monotonic()))
        return web.json_response({"reply": f"tool said {status}; the source is the exchange feed"})

    async def reset(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def bench(self, request: web.Request) -> web.Response:
        """{forward: [...]}: what to forward from now on (spans cleared); null: the spans so far."""
        body = await request.json()
        if body is None:
            return web.json_response(self.spans)
        self.forward, self.spans = tuple(body["forward"]), []
        return web.json_response({"ok": True})

    def app(self) -> web.Application:
        app = web.Application()
        app.add_routes([web.post("/chat", self.chat), web.post("/reset", self.reset), web.post("/bench", self.bench)])
        return app


@dataclass(frozen=True)
class Mode:
    name: str
    isolation: str
    at_once: int
    attribution: str


MODES = [
    Mode("per-cell", "cell", 1, "none"),
    Mode("episode", "episode", 1, "none"),
    Mode("header", "episode", AT_ONCE, "header"),
    Mode("trace", "episode", AT_ONCE, "trace"),
    Mode("slots", "episode", AT_ONCE, "slots"),
]


@dataclass
class World:
    """The tool API, the proxy's ports (fixed, so the slot replicas know theirs) and the agents."""

    tool_port: int = field(default_factory=free_port)
    listen: str = field(default_factory=lambda: f"127.0.0.1:{free_port()}")
    slot_listen: list[str] = field(default_factory=lambda: [f"127.0.0.1:{free_port()}" for _ in range(AT_ONCE)])
    shared_url: str = ""
    replica_urls: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """The tool API and the agents in their own process (as deployed agents are), all on one event loop."""
        ports = [free_port() for _ in range(1 + len(self.slot_listen))]
        spec = {"tool_port": self.tool_port, "agents": [[p, t] for p, t in zip(ports, self.tools_urls(), strict=True)]}
        self.process = subprocess.Popen([sys.executable, __file__, "--serve", json.dumps(spec)], stdout=subprocess.PIPE)
        assert self.process.stdout is not None and self.process.stdout.readline().startswith(b"serving")
        self.shared_url, *urls = (f"http://127.0.0.1:{p}" for p in ports)
        self.replica_urls = urls

    def tools_urls(self) -> list[str]:
        return [f"http://{self.listen}"] + [f"http://{address}" for address in self.slot_listen]

    def agents(self, mode: Mode) -> list[str]:
        return self.replica_urls if mode.attribution == "slots" else [self.shared_url]

    def config(self, mode: Mode) -> dict[str, Any]:
        agent: dict[str, Any] = {
            "type": "http",
            "endpoint": f"{self.shared_url}/chat",
            "request_template": {"message": "{prompt}"},
            "response_path": "$.reply",
            "reset_endpoint": f"{self.shared_url}/reset",
        }
        listener = {"name": "tools", "listen": self.listen, "upstream": f"http://127.0.0.1:{self.tool_port}"}
        proxy: dict[str, Any] = {"admin": f"127.0.0.1:{free_port()}", "listeners": [listener]}
        if mode.attribution == "slots":
            agent["slots"] = [
                {"endpoint": f"{url}/chat", "reset_endpoint": f"{url}/reset"} for url in self.replica_urls
            ]
            listener["slot_listen"] = self.slot_listen
            proxy["slots"] = AT_ONCE
        return {
            "version": "2.0",
            "agent": agent,
            "proxy": proxy,
            "targets": {"quotes": {"listener": "tools", "path": "/v1/quotes*"}},
            "golden_prompts": [f"prompt {n}" for n in range(PROMPTS)],
            "contract": {
                "name": "bench",
                "invariants": [
                    {"id": f"cite-{n}", "type": "regex", "pattern": "(?i)source"} for n in range(INVARIANTS)
                ],
            },
            "chaos_matrix": [{"name": "calm"}]
            + [{"name": f"fault-{n}", "tool_faults": [{"tool": "quotes", **f}]} for n, f in enumerate(FAULTS)],
            "run": {
                "seed": 1,
                "replicas": REPLICAS,
                "concurrency": mode.at_once,
                "isolation": mode.isolation,
                "attribution": mode.attribution,
            },
        }


@dataclass(frozen=True)
class Row:
    mode: Mode
    invocations: int
    wall_s: float
    episodes_s: float

    @property
    def ideal_s(self) -> float:
        return self.invocations * LATENCY_S / self.mode.at_once


def measure(world: World, mode: Mode) -> Row:
    agents = world.agents(mode)
    for url in agents:
        post(f"{url}/bench", {"forward": FORWARDS.get(mode.attribution, ())})  # and forget the last spans
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.json"
        path.write_text(json.dumps(world.config(mode)))
        start = time.monotonic()
        result = asyncio.run(run_contract_async(load_config(path), str(path), None))
        wall = time.monotonic() - start
    assert result.score is not None and result.score.passed, result.score
    assert result.unattributed_requests == 0, result.unattributed_requests
    spans = [s for url in agents for s in post(f"{url}/bench", None)]
    assert len(spans) == result.agent_invocations, (len(spans), result.agent_invocations)
    episodes = max(end for _, end in spans) - min(start for start, _ in spans)
    return Row(mode, result.agent_invocations, wall, episodes)


def post(url: str, body: Any) -> Any:
    """The bench agent's own endpoint: set what it forwards (and clear its spans), or (None) read its spans."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    with opener.open(request, timeout=10) as r:
        return json.load(r)


def serve_agents(spec: dict[str, Any]) -> None:
    """The agent process: the tool API and every agent on one loop; prints 'serving' once they listen."""

    async def quote(request: web.Request) -> web.Response:
        return web.json_response({"price": 189.5})

    async def main() -> None:
        tools = web.Application()
        tools.add_routes([web.get("/v1/quotes", quote)])
        await start_app(tools, spec["tool_port"])
        for port, tools_url in spec["agents"]:
            await start_app(Agent(tools_url).app(), port)
        print("serving", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


async def start_app(app: web.Application, port: int) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()


HEAD = ["mode", "at once", "invocations", "wall s", "episodes s", "ideal s", "x ideal", "vs cell"]
WIDTHS = (9, 7, 11, 7, 10, 7, 7, 7)


def line(values: list[Any]) -> str:
    return " ".join(f"{v:>{w}}" for v, w in zip(values, WIDTHS, strict=True))


def render(row: Row, cell: Row, fmt: Callable[[float], str] = "{:.2f}".format) -> str:
    return line(
        [
            row.mode.name,
            row.mode.at_once,
            row.invocations,
            fmt(row.wall_s),
            fmt(row.episodes_s),
            fmt(row.ideal_s),
            f"{row.episodes_s / row.ideal_s:.2f}",
            f"{cell.episodes_s / row.episodes_s:.1f}x",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=1, help="runs of the whole table (figures are noisy)")
    parser.add_argument("--modes", default=",".join(m.name for m in MODES), help="comma-separated subset")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # the agent process
    args = parser.parse_args()
    if args.serve:
        serve_agents(json.loads(args.serve))
        return
    wanted = [m for m in MODES if m.name in args.modes.split(",")]
    world = World()
    world.start()
    print(
        f"contract matrix: {SCENARIOS} scenarios x {PROMPTS} prompts x {REPLICAS} replicas, {INVARIANTS} "
        f"invariants, agent latency {LATENCY_S * 1000:.0f} ms, python {sys.version.split()[0]}"
    )
    for n in range(args.repeat):
        print(f"run {n + 1}/{args.repeat}" if args.repeat > 1 else "")
        print(line(HEAD))
        rows: list[Row] = []
        for mode in wanted:
            rows.append(measure(world, mode))
            print(render(rows[-1], rows[0]), flush=True)
    assert world.process is not None
    world.process.terminate()
    world.process.wait(10)


if __name__ == "__main__":
    main()
