"""What a contract matrix costs: 5 scenarios x 6 invariants x 2 prompts against an agent with a fixed 200 ms
latency, in each run mode side by side (the real proxy and runner, in one run of this script).

Run: .venv/bin/python bench/matrix.py

Columns: invocations (agent runs, each one paid on a real LLM), wall (the whole run, with the proxy's start),
episodes (first to last episode), ideal (invocations x latency / concurrency), batched (the reachable floor
while one scenario is active at a time: scenarios x ceil(episodes per scenario / concurrency) x latency).

isolation: cell is the spec's literal reading (each invariant x scenario cell invokes the agent itself);
isolation: episode (the default) has every invariant judge the same invocations. Concurrency > 1 needs the
agent to forward x-flakeproxy-cell (run.attribution: header), which this bench agent does.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from aiohttp import ClientSession, web

from flakeproxy import load_config
from flakeproxy.runner.engine import run_contract_async

LATENCY_S = 0.2
SCENARIOS, INVARIANTS, PROMPTS = 5, 6, 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(app: web.Application, port: int) -> None:
    loop = asyncio.new_event_loop()

    async def start() -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()

    loop.run_until_complete(start())
    threading.Thread(target=loop.run_forever, daemon=True).start()


def main() -> None:
    tool_port, agent_port, listen_port = free_port(), free_port(), free_port()

    async def quote(request: web.Request) -> web.Response:
        return web.json_response({"price": 189.5})

    async def chat(request: web.Request) -> web.Response:
        cell = {"x-flakeproxy-cell": request.headers["x-flakeproxy-cell"]}
        async with ClientSession(headers=cell) as http, http.get(f"http://127.0.0.1:{listen_port}/v1/quotes") as r:
            status = r.status
        await asyncio.sleep(LATENCY_S)
        return web.json_response({"reply": f"tool said {status}; the source is the exchange feed"})

    async def reset(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    tools, agent = web.Application(), web.Application()
    tools.add_routes([web.get("/v1/quotes", quote)])
    agent.add_routes([web.post("/chat", chat), web.post("/reset", reset)])
    serve(tools, tool_port)
    serve(agent, agent_port)

    print(
        f"contract matrix: {SCENARIOS} scenarios x {INVARIANTS} invariants x {PROMPTS} prompts, "
        f"agent latency {LATENCY_S * 1000:.0f} ms, python {sys.version.split()[0]}"
    )
    head = ["isolation", "concurrency", "invocations", "wall s", "episodes s", "ideal s", "batched s", "vs batched"]
    widths = (9, 11, 11, 8, 10, 8, 9, 10)
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, widths, strict=True)))
    for isolation, concurrency in (("cell", 1), ("episode", 1), ("cell", 4), ("episode", 4)):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.json"
            path.write_text(json.dumps(config(agent_port, listen_port, tool_port, isolation, concurrency)))
            marks: list[float] = []

            def mark(_line: str, marks: list[float] = marks) -> None:
                marks.append(time.monotonic())

            start = time.monotonic()
            result = asyncio.run(run_contract_async(load_config(path), str(path), None, mark))
            wall = time.monotonic() - start
        assert result.score is not None and result.score.passed, result.score
        n = result.agent_invocations
        per_scenario = n // SCENARIOS
        episodes = marks[-1] - marks[0] + LATENCY_S  # first to last episode, plus the first episode itself
        ideal = n * LATENCY_S / concurrency
        batched = SCENARIOS * -(-per_scenario // concurrency) * LATENCY_S
        row = (isolation, concurrency, n, f"{wall:.2f}", f"{episodes:.2f}", f"{ideal:.2f}", f"{batched:.2f}")
        print(" ".join(f"{v:>{w}}" for v, w in zip(row, widths, strict=False)), f"{episodes / batched - 1:>+10.0%}")


def config(agent_port: int, listen_port: int, tool_port: int, isolation: str, concurrency: int) -> dict[str, object]:
    return {
        "version": "2.0",
        "agent": {
            "type": "http",
            "endpoint": f"http://127.0.0.1:{agent_port}/chat",
            "request_template": {"message": "{prompt}"},
            "response_path": "$.reply",
            "reset_endpoint": f"http://127.0.0.1:{agent_port}/reset",
        },
        "proxy": {
            "admin": f"127.0.0.1:{free_port()}",
            "listeners": [
                {"name": "tools", "listen": f"127.0.0.1:{listen_port}", "upstream": f"http://127.0.0.1:{tool_port}"}
            ],
        },
        "targets": {"quotes": {"listener": "tools", "path": "/v1/quotes*"}},
        "golden_prompts": [f"prompt {n}" for n in range(PROMPTS)],
        "contract": {
            "name": "bench",
            "invariants": [{"id": f"cite-{n}", "type": "regex", "pattern": "(?i)source"} for n in range(INVARIANTS)],
        },
        "chaos_matrix": [{"name": "calm"}]
        + [
            {"name": f"slow-{n}", "tool_faults": [{"tool": "quotes", "mode": "slow", "delay_ms": 1}]}
            for n in range(SCENARIOS - 1)
        ],
        "run": {"concurrency": concurrency, "isolation": isolation, "attribution": "header"},
    }


if __name__ == "__main__":
    main()
