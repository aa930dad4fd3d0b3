"""What the proxy costs: latency and throughput direct, via plain mitmproxy, via flakeproxy.

Run: .venv/bin/python bench/proxy_overhead.py [--requests N]

Every server runs in its own process (upstream, mitmdump, flakeproxy), the client in this one, all on
127.0.0.1. It prints, from one run:
  - p50 / p99 latency of a small JSON GET over one keep-alive connection, and the added p50 over direct;
  - requests/s over 1 connection and over 8 concurrent connections;
for: direct, plain mitmproxy (mitmdump, reverse mode, no addon), flakeproxy with no scenario, and
flakeproxy with a scenario whose faults match nothing; then the SSE time to first event, direct vs
through flakeproxy. Figures vary with the machine: compare rows of the same run, not runs.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flakeproxy import control_api as api

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent


def byte_compiled() -> None:
    """flakeproxy's own modules as bytecode, as an installed wheel has them (pip compiles at install) and as
    mitmdump's are: an editable install where PYTHONDONTWRITEBYTECODE is set would otherwise compile ~300 modules
    from source at every launch (scripts/bootstrap does the same)."""
    repo = HERE.parent
    folders = [str(repo / name) for name in ("flakeproxy", "addons", "runner")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", *folders], check=True, capture_output=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(port: int, timeout: float = 15, poll: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(poll)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


@contextmanager
def process(args: list[str], port: int) -> Iterator[None]:
    with subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as child:
        try:
            wait_for(port)
            yield
        finally:
            child.terminate()
            child.wait(10)


def latencies(port: int, n: int, path: str = "/json", body: bytes | None = None) -> list[float]:
    """Each request's time over one keep-alive connection: GETs, or JSON POSTs of `body`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"content-type": "application/json"} if body is not None else {}
    out = []
    for _ in range(n):
        start = time.perf_counter()
        conn.request("GET" if body is None else "POST", path, body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        out.append(time.perf_counter() - start)
        assert response.status == 200, response.status
    conn.close()
    return out


def throughput(port: int, n: int, connections: int) -> float:
    per = max(1, n // connections)
    start = time.perf_counter()
    threads = [threading.Thread(target=latencies, args=(port, per)) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return per * connections / (time.perf_counter() - start)


def first_event(port: int, n: int, keep_alive: bool = False) -> float:
    """Median time from sending the request to reading the first SSE event line."""
    times = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for _ in range(n):
        if not keep_alive:
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.connect()
        start = time.perf_counter()
        conn.request("GET", "/sse")
        response = conn.getresponse()
        response.readline()
        times.append(time.perf_counter() - start)
        response.read()
    conn.close()
    return statistics.median(times)


def flakeproxy_config(upstream: int, listen: int, admin: int, folder: Path) -> Path:
    path = folder / f"bench-{listen}.json"
    config = {
        "version": "2.0",
        "proxy": {
            "admin": f"127.0.0.1:{admin}",
            "listeners": [
                {"name": "tools", "listen": f"127.0.0.1:{listen}", "upstream": f"http://127.0.0.1:{upstream}"}
            ],
        },
        "targets": {"other": {"listener": "tools", "path": "/never*"}},
        "chaos_matrix": [{"name": "elsewhere", "tool_faults": [{"tool": "other", "mode": "error"}]}],
    }
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def summary(name: str, rounds: list[list[float]], base_p50: float, rps1: float, rps8: float) -> str:
    lat = [x for r in rounds for x in r]
    p50 = statistics.median(statistics.median(r) for r in rounds) * 1000
    p99 = statistics.quantiles(lat, n=100)[98] * 1000
    return f"{name:<34} {p50:7.2f} {p99:7.2f} {p50 - base_p50 * 1000:+8.2f} {rps1:9.0f} {rps8:9.0f}"


def put(url: str, body: bytes) -> None:
    urllib.request.urlopen(urllib.request.Request(url, method="PUT", data=body), timeout=10).read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=600, help="requests per setup and round (default 600)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    args = parser.parse_args()
    n = args.requests
    up, plain, fp, fp_admin, fs, fs_admin = (free_port() for _ in range(6))
    print(
        f"proxy overhead: {args.rounds} interleaved rounds of {n} requests per setup, "
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores"
    )
    mitmdump = [
        str(BIN / "mitmdump"),
        "-q",
        "--mode",
        f"reverse:http://127.0.0.1:{up}@127.0.0.1:{plain}",
        "--set",
        "connection_strategy=lazy",
    ]
    with (
        tempfile.TemporaryDirectory() as tmp,
        process([sys.executable, str(HERE / "_upstream.py"), str(up)], up),
        process(mitmdump, plain),
        process(
            [str(BIN / "flakeproxy"), "proxy", "-c", str(flakeproxy_config(up, fp, fp_admin, Path(tmp)))], fp_admin
        ),
        process(
            [str(BIN / "flakeproxy"), "proxy", "-c", str(flakeproxy_config(up, fs, fs_admin, Path(tmp)))], fs_admin
        ),
    ):
        put(f"http://127.0.0.1:{fs_admin}{api.SCENARIO_PUT.path()}", b'{"name": "elsewhere"}')
        setups = {
            "direct": up,
            "plain mitmproxy (no addon)": plain,
            "flakeproxy, no scenario": fp,
            "flakeproxy, faults match nothing": fs,
        }
        rounds: dict[str, list[list[float]]] = {name: [] for name in setups}
        for port in setups.values():
            latencies(port, 50)  # warm up
        for _ in range(args.rounds):
            for name, port in setups.items():
                rounds[name].append(latencies(port, n))
        base = statistics.median(statistics.median(r) for r in rounds["direct"])
        print(f"{'setup':<34} {'p50 ms':>7} {'p99 ms':>7} {'+p50 ms':>8} {'req/s 1c':>9} {'req/s 8c':>9}")
        for name, port in setups.items():
            print(summary(name, rounds[name], base, throughput(port, n, 1), throughput(port, n, 8)))
    # SSE through plain mitmproxy told to stream, flakeproxy, and direct
    streaming = [*mitmdump, "--set", "stream_large_bodies=1"]
    fp_cmd = [str(BIN / "flakeproxy"), "proxy", "-c"]
    print("SSE time to first event, median of 30 (a new connection is opened before the clock starts):")
    with process([sys.executable, str(HERE / "_upstream.py"), str(up)], up):
        for keep_alive in (False, True):
            direct_first = first_event(up, 30, keep_alive)
            with process(streaming, plain):
                plain_first = first_event(plain, 30, keep_alive)
            with (
                tempfile.TemporaryDirectory() as tmp,
                process([*fp_cmd, str(flakeproxy_config(up, fp, fp_admin, Path(tmp)))], fp_admin),
            ):
                via = first_event(fp, 30, keep_alive)
            label = "reused connection" if keep_alive else "new connection"
            print(
                f"  {label:<17}: direct {direct_first * 1000:.2f} ms; plain mitmproxy (streaming) "
                f"{plain_first * 1000:.2f} ms ({(plain_first - direct_first) * 1000:+.2f}); "
                f"flakeproxy {via * 1000:.2f} ms ({(via - direct_first) * 1000:+.2f})"
            )


if __name__ == "__main__":
    main()
