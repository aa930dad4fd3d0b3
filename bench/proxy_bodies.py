"""What a large body costs the proxy in memory: peak RSS while 1 GiB streams up, then 1 GiB down.

Run: .venv/bin/python bench/proxy_bodies.py [--mib N] [--buffered]

For flakeproxy (no scenario; then a scenario whose faults match nothing) and plain mitmproxy (mitmdump,
reverse mode, no addon, told to stream bodies over 1 MiB), each in its own process: the client sends
N MiB to the upstream (chunked) and reads N MiB back, while this script samples the proxy's RSS every
20 ms. --buffered adds plain mitmdump with its defaults, which buffers whole bodies (needs ~3x N MiB
of memory). Target for flakeproxy: peak under 200 MB for 1 GiB each way.
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from proxy_overhead import BIN, HERE, flakeproxy_config, free_port, process, wait_for

from flakeproxy import control_api as api

CHUNK = b"u" * (1024 * 1024)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_while(pid: int, work: threading.Thread) -> float:
    peak = rss_mb(pid)
    work.start()
    while work.is_alive():
        peak = max(peak, rss_mb(pid))
        work.join(0.02)
    return max(peak, rss_mb(pid))


def up_and_down(port: int, mib: int) -> None:
    def body() -> Iterator[bytes]:
        for _ in range(mib):
            yield CHUNK

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    conn.request("POST", "/sink", body=body(), encode_chunked=True)
    response = conn.getresponse()
    sent = json.loads(response.read())["bytes"]
    assert response.status == 200 and sent == mib * len(CHUNK), (response.status, sent)
    conn.request("GET", f"/source?bytes={mib * len(CHUNK)}")
    response = conn.getresponse()
    got = 0
    while piece := response.read(1024 * 1024):
        got += len(piece)
    assert response.status == 200 and got == mib * len(CHUNK), (response.status, got)
    conn.close()


def measure(name: str, args: list[str], port: int, ready_port: int, mib: int, scenario: str | None = None) -> None:
    with subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as child:
        try:
            wait_for(ready_port)
            if scenario:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{ready_port}{api.SCENARIO_PUT.path()}",
                    method=api.SCENARIO_PUT.method,
                    data=scenario.encode(),
                )
                urllib.request.urlopen(request, timeout=10).read()
            idle = rss_mb(child.pid)
            start = time.perf_counter()
            peak = peak_while(child.pid, threading.Thread(target=up_and_down, args=(port, mib)))
            took = time.perf_counter() - start
            print(f"  {name:<44} idle {idle:6.0f} MB, peak {peak:6.0f} MB, {2 * mib / took:6.0f} MiB/s")
        finally:
            child.terminate()
            child.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=1024, help="MiB each way (default 1024)")
    parser.add_argument("--buffered", action="store_true", help="also plain mitmdump with its defaults")
    args = parser.parse_args()
    up, plain, fp, admin = free_port(), free_port(), free_port(), free_port()
    mitmdump = [str(BIN / "mitmdump"), "-q", "--mode", f"reverse:http://127.0.0.1:{up}@127.0.0.1:{plain}"]
    mitmdump += ["--set", "connection_strategy=lazy"]
    print(f"proxy RSS while {args.mib} MiB stream up and {args.mib} MiB down, python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp, process([sys.executable, str(HERE / "_upstream.py"), str(up)], up):
        fp_cmd = [str(BIN / "flakeproxy"), "proxy", "-c", str(flakeproxy_config(up, fp, admin, Path(tmp)))]
        measure("flakeproxy, no scenario", fp_cmd, fp, admin, args.mib)
        measure("flakeproxy, faults match nothing", fp_cmd, fp, admin, args.mib, '{"name": "elsewhere"}')
        streaming = [*mitmdump, "--set", "stream_large_bodies=1m"]
        measure("plain mitmproxy, stream_large_bodies=1m", streaming, plain, plain, args.mib)
        if args.buffered:
            measure("plain mitmproxy, defaults (buffers bodies)", mitmdump, plain, plain, args.mib)


if __name__ == "__main__":
    main()
