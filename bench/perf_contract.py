"""The contract rows of bench/perf.py: what a contract run costs beyond its agent, with a null agent.

The null agent (its own process, with the tool API) answers at once after one tool call through the proxy,
forwarding the x-flakeproxy-cell header it was sent (run.attribution: header). Each figure is the wall time of
`flakeproxy contract run` from launch to exit (reports written, proxy stopped): 1 episode and N episodes, at 1
and 8 at once. Fixed cost = T(1) - (T(N) - T(1)) / (N - 1); episodes per minute = 60 (N - 1) / (T(N) - T(1)).
Run alone: .venv/bin/python bench/perf_contract.py [--episodes N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _table import Row, table
from proxy_overhead import BIN, byte_compiled, free_port

ROUNDS = 3


def serve(tool_port: int, agent_port: int, tools_url: str) -> None:
    """The null agent and its tool API on one loop; prints 'serving' once both listen."""
    from aiohttp import ClientSession, web

    async def quote(request: web.Request) -> web.Response:
        return web.json_response({"price": 189.5})

    async def main() -> None:
        session = ClientSession()

        async def chat(request: web.Request) -> web.Response:
            headers = {h: request.headers[h] for h in ("x-flakeproxy-cell",) if h in request.headers}
            async with session.get(f"{tools_url}/v1/quotes", headers=headers) as r:
                await r.read()
            return web.json_response({"reply": f"tool said {r.status}; source: the exchange feed"})

        for port, routes in ((tool_port, [web.get("/v1/quotes", quote)]), (agent_port, [web.post("/chat", chat)])):
            app = web.Application()
            app.add_routes(routes)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
        print("serving", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def config(agent_port: int, tool_port: int, listen: int, episodes: int, at_once: int) -> dict[str, Any]:
    return {
        "version": "2.0",
        "agent": {
            "type": "http",
            "endpoint": f"http://127.0.0.1:{agent_port}/chat",
            "request_template": {"message": "{prompt}"},
            "response_path": "$.reply",
        },
        "proxy": {
            "admin": f"127.0.0.1:{free_port()}",
            "listeners": [
                {"name": "tools", "listen": f"127.0.0.1:{listen}", "upstream": f"http://127.0.0.1:{tool_port}"}
            ],
        },
        "targets": {"quotes": {"listener": "tools", "path": "/v1/quotes*"}},
        "golden_prompts": ["what is AAPL at?"],
        "contract": {
            "name": "null",
            "invariants": [{"id": "cites", "type": "regex", "pattern": "(?i)source", "severity": "critical"}],
        },
        "chaos_matrix": [{"name": "calm"}],
        "run": {"seed": 1, "replicas": episodes, "concurrency": at_once, "attribution": "header"},
    }


def wall(path: Path, out: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [str(BIN / "flakeproxy"), "contract", "run", "-c", str(path), "-o", str(out)], capture_output=True, text=True
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"contract run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return took


def timings(episodes: int, folder: Path) -> dict[tuple[int, int], float]:
    """(episodes, at once) -> median wall seconds, the runs alternating."""
    tool_port, agent_port, listen = free_port(), free_port(), free_port()
    serve_args = [
        sys.executable,
        __file__,
        "--serve",
        json.dumps([tool_port, agent_port, f"http://127.0.0.1:{listen}"]),
    ]
    kinds = [(1, 1), (episodes, 1), (1, 8), (episodes, 8)]
    times: dict[tuple[int, int], list[float]] = {k: [] for k in kinds}
    with subprocess.Popen(serve_args, stdout=subprocess.PIPE) as world:
        try:
            assert world.stdout is not None and world.stdout.readline().startswith(b"serving")
            for _ in range(ROUNDS):
                for n, at_once in kinds:
                    path = folder / f"null-{n}-{at_once}.json"
                    path.write_text(json.dumps(config(agent_port, tool_port, listen, n, at_once)))
                    times[(n, at_once)].append(wall(path, folder / f"out-{n}-{at_once}"))
        finally:
            world.terminate()
    return {k: statistics.median(v) for k, v in times.items()}


def contract_rows(episodes: int, folder: Path, scale: float | None = None) -> list[Row]:
    """The rows; with `scale` (this machine's plain mitmdump start over bench/perf.py's REFERENCE_LAUNCH_S) each
    absolute goal again, scaled to this machine."""
    t = timings(episodes, folder)
    rows = []
    for at_once in (1, 8):
        one, many = t[(1, at_once)], t[(episodes, at_once)]
        per = (many - one) / (episodes - 1)
        rows += absolute(f"{episodes} null episodes, c={at_once}, wall", many, "<", 1.0, scale)
        rows += absolute(f"contract run fixed cost, c={at_once}", one - per, "<=", 0.5, scale)
        rows.append(Row(f"episodes per minute, null agent, c={at_once}", 60 / per, None, "", ">= 10,000 (c=8)",
                        absolute=(lambda v: v >= 10000) if at_once == 8 else None))  # fmt: skip
    return rows


def absolute(measure: str, seconds: float, op: str, bound: float, scale: float | None) -> list[Row]:
    """A row with an absolute goal in seconds (issue 23's, set where plain mitmdump started in ~0.42 s), and with
    `scale` the same goal scaled to this machine."""

    def within(value: float, limit: float) -> bool:
        return value < limit if op == "<" else value <= limit

    rows = [Row(measure, seconds, None, "s", f"{op} {bound:g} s", absolute=lambda v: within(v, bound))]
    if scale is not None:
        scaled = bound * scale
        rows.append(Row(f"  the same, goal x {scale:.2f} (this machine)", seconds, None, "s", f"{op} {scaled:.2f} s",
                        absolute=lambda v: within(v, scaled)))  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        tool_port, agent_port, tools_url = json.loads(args.serve)
        serve(tool_port, agent_port, tools_url)
        return
    byte_compiled()
    with tempfile.TemporaryDirectory() as tmp:
        print(table(contract_rows(args.episodes, Path(tmp)), markdown=False))


if __name__ == "__main__":
    main()
