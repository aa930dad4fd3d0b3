"""The WebSocket row of bench/perf.py: one message's round trip over an open WebSocket, through flakeproxy (a
scenario whose faults match nothing, every message journaled) and through plain mitmdump, to an echo server.

Run alone: .venv/bin/python bench/perf_ws.py [--rounds N]. Rounds alternate between the two proxies; each
sends 500 Realtime-sized JSON events (about 200 bytes) one at a time and takes the median round trip.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from _table import Row, table
from proxy_overhead import HERE, free_port, wait_for
from websockets.sync.client import connect

EVENT = json.dumps(
    {"type": "response.output_text.delta", "event_id": "event_1", "response_id": "resp_1", "delta": " trades" * 20}
)


def round_trips(port: int, count: int) -> list[float]:
    """Seconds per message: send one, wait for its echo, `count` times on one connection (after 50 to warm up)."""
    took = []
    with connect(f"ws://127.0.0.1:{port}/v1/realtime", compression=None, proxy=None) as ws:
        for i in range(count + 50):
            start = time.perf_counter()
            ws.send(EVENT)
            ws.recv()
            if i >= 50:
                took.append(time.perf_counter() - start)
    return took


def ws_rows(rounds: int, folder: Path) -> list[Row]:
    from perf import proxies, running  # perf imports this module's caller; import here, not at the top

    up = free_port()
    with ExitStack() as stack:
        args = [sys.executable, str(HERE / "_ws_echo.py"), str(up)]
        echo = stack.enter_context(subprocess.Popen(args, stderr=subprocess.DEVNULL))  # quiet: wait_for's probe
        stack.callback(echo.terminate)
        wait_for(up)
        plain, ours = proxies(up, folder)
        p50: dict[str, list[float]] = {plain.name: [], ours.name: []}
        with running(plain, ours):
            for _ in range(rounds):
                for proxy in (plain, ours):
                    p50[proxy.name].append(statistics.median(round_trips(proxy.port, 500)))
    med = statistics.median
    return [
        Row("WebSocket message round trip", med(p50[ours.name]) * 1e3, med(p50[plain.name]) * 1e3, "ms", "<= 1.2x",
            lambda r: r <= 1.2),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print(table(ws_rows(args.rounds, Path(folder)), markdown=False))


if __name__ == "__main__":
    main()
