"""Issue 23's table in one run: flakeproxy against plain mitmdump of the same mitmproxy, side by side.

Run: .venv/bin/python bench/perf.py [--rounds N] [--seconds N] [--markdown] [--docs]

Every server runs in its own process on 127.0.0.1 (the upstream, plain mitmdump, flakeproxy with a scenario
whose faults match nothing); rounds alternate between the two proxies so both see the same load. Rows:
  - p50 of a small JSON POST over one keep-alive connection;
  - req/s over 16 connections (wrk, a fixed count of POSTs per round) and the proxy's CPU per request
    (its utime + stime over those rounds / their requests);
  - SSE time to first event on a new connection (mitmdump told to stream: stream_large_bodies=1);
  - launch to ready (mitmdump: its port accepts; flakeproxy: its ready line, printed once it accepts);
  - a WebSocket message's round trip to an echo server (bench/perf_ws.py);
  - RSS after the same number of requests through each (20k by default);
  - the contract rows (bench/perf_contract.py): a null agent's 1- and 100-episode runs, `flakeproxy contract run`
    wall time from launch, at 1 and 8 episodes at once; the fixed cost and episodes per minute from them.
Ratios are what count: the machine's other load moves both columns. --docs writes the table into
docs/performance.md and its unscaled rows into the README's performance section (between their markers), with
the date and load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from _table import Row, table
from perf_contract import contract_rows
from perf_ws import ws_rows
from proxy_overhead import BIN, HERE, byte_compiled, first_event, flakeproxy_config, free_port, latencies, put, wait_for

from flakeproxy import control_api as api

#: plain mitmdump's launch -> ready where issue 23 set its absolute goals (its table: 0.38-0.47 s): the contract
#: rows' absolute goals are also printed scaled by this run's mitmdump launch over it (a slower machine starts
#: every Python process more slowly, flakeproxy's and mitmdump's alike)
REFERENCE_LAUNCH_S = 0.42
#: launch -> ready is the noisiest row: at least this many alternating launches of each
LAUNCH_ROUNDS = 8
POST_BODY = b'{"symbol": "AAPL", "fields": ["price", "currency"]}'
WRK_SCRIPT = """
wrk.method = "POST"
wrk.body = '%s'
wrk.headers["Content-Type"] = "application/json"
"""


@dataclass
class Proxy:
    name: str
    args: list[str]
    port: int  # where requests go
    ready: Callable[[subprocess.Popen[bytes]], None]
    child: subprocess.Popen[bytes] | None = None

    def launch(self) -> float:
        """Start it; the seconds from launch to ready."""
        start = time.perf_counter()
        self.child = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.ready(self.child)
        return time.perf_counter() - start

    def stop(self) -> None:
        if self.child is not None:
            self.child.terminate()
            self.child.wait(10)
            self.child = None

    def cpu_s(self) -> float:
        assert self.child is not None
        stat = Path(f"/proc/{self.child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        assert self.child is not None
        for line in Path(f"/proc/{self.child.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0


def port_accepts(port: int) -> Callable[[subprocess.Popen[bytes]], None]:
    def ready(child: subprocess.Popen[bytes]) -> None:
        wait_for(port, timeout=60, poll=0.002)  # a fine poll: launch to ready is timed by it

    return ready


def ready_line(child: subprocess.Popen[bytes]) -> None:
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line.startswith(b"flakeproxy proxy ready"):
        raise SystemExit(f"flakeproxy did not start: {line!r}")


def proxies(up: int, folder: Path, streaming: bool = False) -> tuple[Proxy, Proxy]:
    """(plain mitmdump, flakeproxy) in front of the upstream; streaming: mitmdump streams every body."""
    plain, fp, admin = free_port(), free_port(), free_port()
    mitmdump = [str(BIN / "mitmdump"), "-q", "--mode", f"reverse:http://127.0.0.1:{up}@127.0.0.1:{plain}"]
    mitmdump += ["--set", "connection_strategy=lazy", *(["--set", "stream_large_bodies=1"] if streaming else [])]
    config = flakeproxy_config(up, fp, admin, folder)
    ours = Proxy("flakeproxy", [str(BIN / "flakeproxy"), "proxy", "-c", str(config)], fp, ready_line)
    ours.admin = admin  # type: ignore[attr-defined]
    return Proxy("plain mitmdump" + (" (streaming)" if streaming else ""), mitmdump, plain, port_accepts(plain)), ours


@contextmanager
def running(*items: Proxy) -> Iterator[None]:
    try:
        for proxy in items:
            proxy.launch()
            if proxy.name == "flakeproxy":
                put(f"http://127.0.0.1:{proxy.admin}{api.SCENARIO_PUT.path()}", b'{"name": "elsewhere"}')  # type: ignore[attr-defined]
        yield
    finally:
        for proxy in items:
            proxy.stop()


def wrk(port: int, seconds: float, script: Path) -> tuple[int, float]:
    """(requests done, seconds): POSTs on 16 connections from 2 threads for `seconds`."""
    script.write_text(WRK_SCRIPT % POST_BODY.decode())
    out = subprocess.run(
        ["wrk", "-t2", "-c16", f"-d{max(1, round(seconds))}s", "-s", str(script), f"http://127.0.0.1:{port}/json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(x for x in out.splitlines() if "requests in" in x)
    count, took = line.split()[0], line.split("requests in")[1].split(",")[0].strip()
    if "Non-2xx" in out:
        raise SystemExit(f"wrk saw error answers through port {port}:\n{out}")
    if "Socket errors" in out:  # timeouts (2 s) on an overloaded machine: counted, and said
        print(
            f"note: port {port}: {next(x for x in out.splitlines() if 'Socket errors' in x).strip()}", file=sys.stderr
        )
    return int(count), _seconds(took)


def _seconds(text: str) -> float:
    for suffix, scale in (("ms", 0.001), ("us", 1e-6), ("m", 60.0), ("s", 1.0)):
        if text.endswith(suffix):
            return float(text.removesuffix(suffix)) * scale
    raise ValueError(text)


def proxy_rows(args: argparse.Namespace, up: int, folder: Path) -> list[Row]:
    plain, ours = proxies(up, folder)
    p50: dict[str, list[float]] = {plain.name: [], ours.name: []}
    rps: dict[str, list[float]] = {plain.name: [], ours.name: []}
    cpu: dict[str, list[float]] = {plain.name: [], ours.name: []}
    sent = dict.fromkeys(p50, 0)
    with running(plain, ours):
        for proxy in (plain, ours):
            latencies(proxy.port, 100, body=POST_BODY)  # warm up
            sent[proxy.name] += 100
        for _ in range(args.rounds):
            for proxy in (plain, ours):
                p50[proxy.name].append(statistics.median(latencies(proxy.port, 300, body=POST_BODY)))
                before = proxy.cpu_s()
                count, took = wrk(proxy.port, args.seconds, folder / "post.lua")
                cpu[proxy.name].append((proxy.cpu_s() - before) / count)
                rps[proxy.name].append(count / took)
                sent[proxy.name] += 300 + count
        # at least rss_after requests through each before RSS is read
        for proxy in (plain, ours):
            while (left := args.rss_after - sent[proxy.name]) > 0:
                seconds = min(30.0, 0.5 + left / statistics.median(rps[proxy.name]))
                sent[proxy.name] += wrk(proxy.port, seconds, folder / "p.lua")[0]
        rss = {proxy.name: proxy.rss_mib() for proxy in (plain, ours)}
    counts = f"{sent[ours.name] / 1000:.0f}k / {sent[plain.name] / 1000:.0f}k"
    med = statistics.median
    return [
        Row("p50, small JSON POST", med(p50[ours.name]) * 1e3, med(p50[plain.name]) * 1e3, "ms", "<= 1.1x",
            lambda r: r <= 1.1),
        Row("req/s, 16 connections", med(rps[ours.name]), med(rps[plain.name]), "", ">= 1.0x", lambda r: r >= 1.0),
        Row("proxy CPU per request", med(cpu[ours.name]) * 1e3, med(cpu[plain.name]) * 1e3, "ms", "<= 0.9x",
            lambda r: r <= 0.9),
        Row(f"RSS after {counts} requests", rss[ours.name], rss[plain.name], "MiB", "<= 1.5x",
            lambda r: r <= 1.5),
    ]  # fmt: skip


def start_rows(args: argparse.Namespace, up: int, folder: Path) -> list[Row]:
    """SSE first event against streaming mitmdump, and launch to ready, in alternating rounds."""
    plain, ours = proxies(up, folder, streaming=True)
    sse: dict[str, list[float]] = {plain.name: [], ours.name: []}
    launch: dict[str, list[float]] = {plain.name: [], ours.name: []}
    for _ in range(max(args.rounds, LAUNCH_ROUNDS)):
        for proxy in (plain, ours):
            launch[proxy.name].append(proxy.launch())
            proxy.stop()
    with running(plain, ours):
        for _ in range(args.rounds):
            for proxy in (plain, ours):
                sse[proxy.name].append(first_event(proxy.port, 20))
    med = statistics.median
    spread = f"{min(launch[ours.name]):.2f}-{max(launch[ours.name]):.2f} s vs "
    spread += f"{min(launch[plain.name]):.2f}-{max(launch[plain.name]):.2f} s"
    return [
        Row("SSE first event", med(sse[ours.name]) * 1e3, med(sse[plain.name]) * 1e3, "ms", "<= 1.1x",
            lambda r: r <= 1.1),
        Row(f"launch -> ready ({spread})", med(launch[ours.name]), med(launch[plain.name]), "s", "<= 1.2x",
            lambda r: r <= 1.2),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per measure (default 3)")
    parser.add_argument("--seconds", type=int, default=4, help="seconds per wrk round (default 4)")
    parser.add_argument("--rss-after", type=int, default=20000, help="requests before RSS is read (default 20000)")
    parser.add_argument("--episodes", type=int, default=100, help="episodes of the long contract run (default 100)")
    parser.add_argument("--skip-contract", action="store_true", help="only the proxy rows")
    parser.add_argument("--markdown", action="store_true", help="the table as Markdown")
    parser.add_argument("--docs", action="store_true", help="also write it into docs/performance.md and the README")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    byte_compiled()
    load = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    # the sandbox sets PYTHONDONTWRITEBYTECODE; compile once so both proxies start from bytecode, as installed ones do
    for folder_name in ("flakeproxy", "addons", "runner"):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / folder_name)], check=True)
    up = free_port()
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        upstream = stack.enter_context(subprocess.Popen([sys.executable, str(HERE / "_upstream.py"), str(up)]))
        stack.callback(upstream.terminate)
        wait_for(up)
        rows = proxy_rows(args, up, folder) + start_rows(args, up, folder) + ws_rows(args.rounds, folder)
        launch = next(r for r in rows if r.measure.startswith("launch -> ready"))
        scale = launch.base / REFERENCE_LAUNCH_S if launch.base else None
        rows += [] if args.skip_contract else contract_rows(args.episodes, folder, scale)
    end_load = os.getloadavg()
    print(
        f"flakeproxy vs plain mitmdump, {started}, python {sys.version.split()[0]}, {os.cpu_count()} cores, "
        f"{args.rounds} alternating rounds; load average {load[0]:.2f} at the start, {end_load[0]:.2f} at the end"
    )
    machine = this_machine(scale) if scale is not None else ""
    print(table(rows, args.markdown) + (f"\n{machine}" if machine else ""))
    if args.docs:
        head = f"`bench/perf.py`, {started}, load average {load[0]:.2f} at the start and {end_load[0]:.2f} at the end"
        head += f" ({os.cpu_count()} cores, shared)"
        write_docs(DOCS, f"{head}:\n\n{table(rows, markdown=True)}\n\n{machine}")
        unscaled = [r for r in rows if not r.measure.startswith(" ")]
        write_docs(README, f"{head}, against plain mitmdump of the same mitmproxy in the same run:\n\n"
                           f"{table(unscaled, markdown=True)}")  # fmt: skip


def this_machine(scale: float) -> str:
    """What the scaled rows mean, in one sentence under the table."""
    return (
        f"Scaled goals: plain mitmdump started {scale:.2f}x as slowly here as where issue 23 set its absolute goals "
        f"(~{REFERENCE_LAUNCH_S} s), so `x {scale:.2f}` rows hold this run to those goals times that."
    )


BEGIN, END = "<!-- bench/perf.py: generated, do not edit -->", "<!-- end of bench/perf.py -->"


DOCS, README = HERE.parent / "docs" / "performance.md", HERE.parent / "README.md"


def write_docs(page: Path, text: str) -> None:
    """Replace what lies between the markers in `page` (docs/performance.md: the whole table and what its scaled
    rows mean; the README: the rows with their goals as issue 23 set them) with `text`."""
    content = page.read_text()
    start, end = content.index(BEGIN) + len(BEGIN), content.index(END)
    page.write_text(content[:start] + "\n" + text + "\n" + content[end:])


if __name__ == "__main__":
    main()
