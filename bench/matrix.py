"""How long a contract matrix takes: 5 scenarios x 6 invariants x 2 prompts, an agent with a fixed 200 ms
latency, at concurrency 1, 4 and 8, beside the ideal (cells x prompts x latency / concurrency).

Run: .venv/bin/python bench/matrix.py

Columns: wall (the whole run, with the proxy's start and the no-chaos calls), cells (the cell phase),
ideal (cells x prompts x latency / concurrency), batched (the best possible when scenarios switch
between batches: scenarios x ceil(invariants / concurrency) x prompts x latency).

The runner starts the real proxy; the agent calls a tool through it on every prompt. Cells of one
scenario run concurrently; scenarios switch between batches, so with 6 invariants per scenario at
most 6 cells run at once, whatever the concurrency: the ideal at 8 is not reachable by design.
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
        async with ClientSession() as http, http.get(f"http://127.0.0.1:{listen_port}/v1/quotes") as r:
            status = r.status
        await asyncio.sleep(LATENCY_S)
        return web.json_response({"reply": f"tool said {status}; the source is the exchange feed"})

    tools, agent = web.Application(), web.Application()
    tools.add_routes([web.get("/v1/quotes", quote)])
    agent.add_routes([web.post("/chat", chat)])
    serve(tools, tool_port)
    serve(agent, agent_port)

    print(
        f"contract matrix: {SCENARIOS} scenarios x {INVARIANTS} invariants x {PROMPTS} prompts, "
        f"agent latency {LATENCY_S * 1000:.0f} ms, python {sys.version.split()[0]}"
    )
    head = ["concurrency", "wall s", "cells s", "ideal s", "vs ideal", "batched s", "vs batched"]
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, (11, 8, 8, 8, 9, 10, 11), strict=True)))
    for concurrency in (1, 4, 8):
        with tempfile.TemporaryDirectory() as tmp:
            config = {
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
                        {
                            "name": "tools",
                            "listen": f"127.0.0.1:{listen_port}",
                            "upstream": f"http://127.0.0.1:{tool_port}",
                        }
                    ],
                },
                "targets": {"quotes": {"listener": "tools", "path": "/v1/quotes*"}},
                "golden_prompts": [f"prompt {n}" for n in range(PROMPTS)],
                "contract": {
                    "name": "bench",
                    "invariants": [
                        {"id": f"cite-{n}", "type": "regex", "pattern": "(?i)source"} for n in range(INVARIANTS)
                    ],
                },
                "chaos_matrix": [{"name": "calm"}]
                + [
                    {"name": f"slow-{n}", "tool_faults": [{"tool": "quotes", "mode": "slow", "delay_ms": 1}]}
                    for n in range(SCENARIOS - 1)
                ],
                "run": {"concurrency": concurrency},
            }
            path = Path(tmp) / "bench.json"
            path.write_text(json.dumps(config))
            marks: list[float] = []

            def mark(_line: str, marks: list[float] = marks) -> None:
                marks.append(time.monotonic())

            start = time.monotonic()
            result = asyncio.run(run_contract_async(load_config(path), str(path), None, mark))
            wall = time.monotonic() - start
        assert result.score is not None and result.score.passed, result.score
        rounds = -(-INVARIANTS // concurrency)
        cells = marks[-1] - marks[0] + PROMPTS * LATENCY_S  # first to last cell, plus the first cell itself
        ideal = SCENARIOS * INVARIANTS * PROMPTS * LATENCY_S / concurrency
        batched = SCENARIOS * rounds * PROMPTS * LATENCY_S
        print(
            f"{concurrency:>11} {wall:>8.2f} {cells:>8.2f} {ideal:>8.2f} {cells / ideal - 1:>+9.0%} "
            f"{batched:>10.2f} {cells / batched - 1:>+11.0%}"
        )


if __name__ == "__main__":
    main()
