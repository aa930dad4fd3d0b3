"""What reading a big journal costs: GET /journal time, and how long proxied requests stall meanwhile.

Run: .venv/bin/python bench/proxy_journal.py [--entries N]

Fills the journal of a flakeproxy (its own process) with N requests carrying a 64 KiB body each way
(the journal's body cap), then reads GET /journal?limit=N while a client sends small GETs through the
proxy on one keep-alive connection. Prints the GET /journal time and size, the proxied latency p50
before, and the worst proxied latency while the journal was being read (the stall).
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from proxy_overhead import BIN, HERE, flakeproxy_config, free_port, latencies, process

from flakeproxy import control_api as api

BODY = b"y" * 65536


def post_big(port: int, n: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for _ in range(n):
        conn.request("POST", "/big", body=BODY)
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status
    conn.close()


def probe(port: int, stop: threading.Event, out: list[tuple[float, float]]) -> None:
    """Small GETs through the proxy until stopped: (start time, latency)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while not stop.is_set():
        start = time.perf_counter()
        conn.request("GET", "/json")
        conn.getresponse().read()
        out.append((start, time.perf_counter() - start))
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=3000, help="journal entries of 64 KiB each way (3000)")
    args = parser.parse_args()
    up, fp, admin = free_port(), free_port(), free_port()
    with (
        tempfile.TemporaryDirectory() as tmp,
        process([sys.executable, str(HERE / "_upstream.py"), str(up)], up),
        process([str(BIN / "flakeproxy"), "proxy", "-c", str(flakeproxy_config(up, fp, admin, Path(tmp)))], admin),
    ):
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda n: post_big(fp, n), [args.entries // 8] * 8 + [args.entries % 8]))
        quiet = latencies(fp, 400)
        stop, seen = threading.Event(), []
        prober = threading.Thread(target=probe, args=(fp, stop, seen))
        prober.start()
        time.sleep(0.2)  # let the prober reach a steady pace before the read starts
        conn = http.client.HTTPConnection("127.0.0.1", admin, timeout=120)
        start = time.perf_counter()
        conn.request("GET", api.JOURNAL.path(query=[("limit", str(args.entries))]))
        body = conn.getresponse().read()
        took = time.perf_counter() - start
        stop.set()
        prober.join()
        during = [lat for at, lat in seen if start - 0.05 <= at <= start + took]
        print(f"journal of {args.entries} entries (64 KiB bodies each way), python {sys.version.split()[0]}")
        kept = len(json.loads(body)["entries"])
        print(f"  GET /journal: {took:.2f} s, {len(body) / 1e6:.0f} MB, {kept} entries kept")
        print(
            f"  proxied GETs before (400): p50 {statistics.median(quiet) * 1000:.1f} ms, "
            f"worst {max(quiet) * 1000:.0f} ms"
        )
        print(
            f"  proxied GETs during the read: {len(during)}, worst {max(during, default=0) * 1000:.0f} ms, "
            f"p50 {statistics.median(during) * 1000 if during else 0:.1f} ms"
        )


if __name__ == "__main__":
    main()
