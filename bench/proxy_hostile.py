"""What hostile bodies cost everyone else: proxied p99 while the journal of 100 x 64 KiB hostile bodies is read.

Run: .venv/bin/python bench/proxy_hostile.py [--cells N] [--probes N]

A flakeproxy (its own process) journals N cells of 100 requests each, every request carrying 64 KiB of a body
that is one long run of word characters (hex, one character, cut JSON, base64url: what made redaction quadratic,
29.5 s for one 64 KiB body) and getting 64 KiB of one character back. Then, while a client sends small GETs
through the proxy on one keep-alive connection, each cell is read with GET /journal?episode=ID and closed with
POST /episodes/{id}/end, both of which redact and serialize its 100 entries. Prints the proxied p99 without that
load (the baseline, measured first in the same run) and during it, and what each read took. Target: the p99
during the reads stays under 100 ms.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from proxy_overhead import BIN, HERE, flakeproxy_config, free_port, latencies, process

from flakeproxy import control_api as api

KIB64 = 65536
PER_CELL = 100


def hostile(i: int) -> bytes:
    rng = random.Random(i)
    kind = i % 4
    if kind == 0:
        return rng.randbytes(KIB64 // 2).hex().encode()
    if kind == 1:
        return b"a" * KIB64
    if kind == 2:
        return (b'{"id": "' + b"b" * KIB64)[:KIB64]
    return base64.urlsafe_b64encode(rng.randbytes(KIB64))[:KIB64]


def fill(port: int, cell: str) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for i in range(PER_CELL):
        conn.request("POST", "/big", body=hostile(i), headers={"x-flakeproxy-cell": cell})
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status
    conn.close()


def control(admin: int, method: str, path: str, body: object = None) -> tuple[float, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", admin, timeout=300)
    data = None if body is None else json.dumps(body).encode()
    start = time.perf_counter()
    conn.request(method, path, body=data, headers={"content-type": "application/json"})
    response = conn.getresponse()
    out = response.read()
    took = time.perf_counter() - start
    conn.close()
    assert response.status in (200, 201), (response.status, out[:300])
    return took, out


def open_cell(admin: int, label: str) -> str:
    return str(
        json.loads(control(admin, api.EPISODE_BEGIN.method, api.EPISODE_BEGIN.path(), {"label": label})[1])["id"]
    )


def probe(port: int, cell: str, stop: threading.Event, out: list[float]) -> None:
    """Small GETs through the proxy, in a cell of their own (never the one being read), until stopped."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while not stop.is_set():
        start = time.perf_counter()
        conn.request("GET", "/json", headers={"x-flakeproxy-cell": cell})
        conn.getresponse().read()
        out.append(time.perf_counter() - start)
    conn.close()


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", type=int, default=4, help="cells of 100 hostile requests each (4)")
    parser.add_argument("--probes", type=int, default=1000, help="proxied GETs for the baseline (1000)")
    args = parser.parse_args()
    up, fp, admin = free_port(), free_port(), free_port()
    with (
        tempfile.TemporaryDirectory() as tmp,
        process([sys.executable, str(HERE / "_upstream.py"), str(up)], up),
        process([str(BIN / "flakeproxy"), "proxy", "-c", str(flakeproxy_config(up, fp, admin, Path(tmp)))], admin),
    ):
        latencies(fp, 100)  # warm up
        quiet = latencies(fp, args.probes)
        cells = [open_cell(admin, f"hostile {k}") for k in range(args.cells)]
        for cell in cells:
            fill(fp, cell)
        stop, during = threading.Event(), []
        prober = threading.Thread(target=probe, args=(fp, open_cell(admin, "probes"), stop, during))
        prober.start()
        reads, ends = [], []
        for cell in cells:
            took, body = control(admin, "GET", api.JOURNAL.path(query=[("episode", cell), ("limit", str(PER_CELL))]))
            assert len(json.loads(body)["entries"]) == PER_CELL
            reads.append(took)
            took, body = control(admin, "POST", api.EPISODE_END.path(cell))
            assert len(json.loads(body)["journal"]) == PER_CELL
            ends.append(took)
        stop.set()
        prober.join()
    print(f"hostile bodies: {args.cells} cells x {PER_CELL} requests, 64 KiB each way, python {sys.version.split()[0]}")
    print(f"  proxied GET p99 without load:            {p99(quiet):6.1f} ms ({len(quiet)} GETs)")
    print(
        f"  proxied GET p99 while journals are read: {p99(during):6.1f} ms ({len(during)} GETs, "
        f"worst {max(during) * 1000:.0f} ms)"
    )
    print(
        f"  {api.JOURNAL}?episode= (100 entries): {statistics.median(reads):.2f} s median; "
        f"{api.EPISODE_END}: {statistics.median(ends):.2f} s median"
    )


if __name__ == "__main__":
    main()
