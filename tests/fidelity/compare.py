"""Run one row both ways (the real failure directly; the fault through flakeproxy over a normal upstream) and
compare the client's reactions."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from tests.fidelity.clients import Seen, run_client
from tests.fidelity.real_upstream import RealUpstream
from tests.fidelity.row import Row
from tests.support.proxy import Proxy

#: The response headers the openai and anthropic SDKs read (retry timing, the retry decision, request ids).
SDK_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry", "x-request-id", "request-id")
IDS = ("x-request-id", "request-id")
TARGET = {"openai": "chat", "anthropic": "claude", "responses": "responses", "gemini": "gemini"}


@dataclass
class Run:
    seen: Seen
    attempts: int
    waits: list[float]
    headers: list[dict[str, str]] = field(default_factory=list)  # per attempt: the SDK-read headers

    def summary(self, row: Row) -> str:
        """What the client sees, in a table cell."""
        s = self.seen
        head = f"{s.error}" + (f" {s.status}" if s.status else "") if s.error else f"returns, finish `{s.finish}`"
        if row.call == "tools_stream" and not s.error:
            head += f", arguments `{s.content}`"
        return f"{head}; {self.attempts} attempt{'s' if self.attempts != 1 else ''}"


def sdk_headers(headers: dict[str, str]) -> dict[str, str]:
    lower = {k.lower(): v for k, v in headers.items()}
    return {k: ("<id>" if k in IDS else lower[k]) for k in SDK_HEADERS if k in lower}


def run_direct(row: Row, up: RealUpstream) -> Run:
    up.seen.clear()
    up.plan = row.real
    try:
        seen = run_client(row.client, up.url, row.call, row.max_retries, row.timeout)
    finally:
        up.plan = None
    at = [s.at for s in up.seen]
    return Run(seen, len(at), [b - a for a, b in pairwise(at)], [sdk_headers(s.headers) for s in up.seen])


def run_proxied(
    row: Row, proxy: Proxy, listener: str = "llm", target: str | None = None, section: str = "llm_faults"
) -> Run:
    proxy.control.ok("POST", "/reset")
    fault = {"tool": target or TARGET[row.provider], **row.inject}
    proxy.control.scenario("fidelity", **{section: [fault]})
    cell = proxy.control.begin()
    seen = run_client(row.client, proxy.listeners[listener], row.call, row.max_retries, row.timeout)
    journal = proxy.control.end(cell)
    at = [float(e["started_at"]) for e in journal]
    headers = [sdk_headers(e.get("response_headers") or {}) if e.get("fault") else {} for e in journal]
    return Run(seen, len(journal), [b - a for a, b in pairwise(at)], headers)


def mismatches(real: Run, injected: Run) -> list[str]:
    """Every way the client's reaction to the fault differs from its reaction to the real failure."""
    out = []
    a, b = real.seen.as_dict(), injected.seen.as_dict()
    out += [f"{k}: real {a[k]!r}, injected {b[k]!r}" for k in a if a[k] != b[k]]
    if real.attempts != injected.attempts:
        out.append(f"attempts: real {real.attempts}, injected {injected.attempts}")
    for i, (x, y) in enumerate(zip(real.waits, injected.waits, strict=False)):
        if abs(x - y) > max(0.3 * max(x, y), 0.1):
            out.append(f"wait before attempt {i + 2}: real {x:.2f} s, injected {y:.2f} s")
    for i, (x, y) in enumerate(zip(real.headers, injected.headers, strict=False)):
        for name in sorted(set(x) | set(y)):
            if x.get(name) != y.get(name):
                out.append(f"header {name} (attempt {i + 1}): real {x.get(name)!r}, injected {y.get(name)!r}")
    return out


def describe(row: Row, real: Run, injected: Run) -> dict[str, Any]:
    return {"row": row.id, "real": real.seen.as_dict(), "injected": injected.seen.as_dict()}
