"""A response the agent got cut short (a body closed before its Content-Length, a stream reset mid-event) is
recorded as such and replayed the same way: the same bytes, then the same close. A fetch-based agent (undici,
which the Vercel AI SDK and Node agents use) and a Python client get the same error from the replay as from
the recording."""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
from collections.abc import Callable
from urllib.parse import urlsplit

import pytest

from flakeproxy.config.replays import Session
from tests.replay.test_proxy_replay import record, replay
from tests.support.proxy import config_for, running_proxy
from tests.support.upstream import RunningUpstream

CHAT = "/v1/chat/completions"
TARGETS = {"quotes": {"listener": "tools", "path": "/v1/quotes*"}, "events": {"listener": "tools", "path": "/sse*"}}
#: How a fetch-based agent reads a tool's answer: what it got, or the error it raised.
FETCH = """
const [url, cell] = process.argv.slice(1);
try {
  const res = await fetch(url, {headers: {"x-flakeproxy-cell": cell}});
  const text = await res.text();
  console.log(JSON.stringify({status: res.status, text}));
} catch (e) {
  const cause = String(e.cause?.code ?? e.cause?.message ?? "");
  console.log(JSON.stringify({error: `${e.name}: ${e.message}`, cause}));
}
"""


def python_get(base: str, path: str, cell: str) -> tuple[int | None, bytes, str | None]:
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("GET", path, headers={"x-flakeproxy-cell": cell})
        response = conn.getresponse()
        try:
            return response.status, response.read(), None
        except http.client.IncompleteRead as e:
            return response.status, e.partial, f"IncompleteRead({len(e.partial)} bytes read, {e.expected} more)"
    finally:
        conn.close()


def node_get(base: str, path: str, cell: str) -> dict[str, object]:
    out = subprocess.run(
        ["node", "--input-type=module", "-e", FETCH, base + path, cell], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


CLIENTS: dict[str, Callable[[str, str, str], object]] = {"python": python_get, "fetch": node_get}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_truncated_answer_replays_with_the_same_close(client: str) -> None:
    if client == "fetch" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    get = CLIENTS[client]
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, TARGETS)) as proxy:
        base = proxy.listeners["tools"]
        proxy.control.scenario("cut", tool_faults=[{"tool": "quotes", "mode": "truncated", "keep_fraction": 0.5}])
        recorded, exchanges = record(proxy.control, "q", lambda cell: get(base, "/v1/quotes?symbol=AAPL", cell))
        [exchange] = exchanges
        assert exchange.closed_mid_body and exchange.declared_bytes is not None
        assert len(exchange.response_body) < exchange.declared_bytes
        proxy.control.scenario(None)
        before = len(up.requests)
        session = Session(id="q", input="", exchanges=exchanges, scenario="cut")
        replayed, report = replay(proxy.control, session, lambda cell: get(base, "/v1/quotes?symbol=AAPL", cell))
        assert len(up.requests) == before, "the upstream was called during the replay"
    assert report["served"] == 1 and report["unmatched"] == []
    assert replayed == recorded, (recorded, replayed)
    said = repr(recorded)
    assert "IncompleteRead" in said or "terminated" in said, recorded  # an error, not a complete short body


def chat_stream(base: str, cell: str) -> tuple[int | None, bytes, str | None]:
    """A streamed chat completion read as an agent's HTTP client reads it (chunked, to its end or its error)."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    body = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "AAPL?"}]})
    try:
        conn.request("POST", CHAT, body, headers={"x-flakeproxy-cell": cell, "content-type": "application/json"})
        response = conn.getresponse()
        try:
            return response.status, response.read(), None
        except http.client.IncompleteRead as e:
            return response.status, e.partial, f"IncompleteRead({len(e.partial)} bytes read)"
    finally:
        conn.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("pace", [0.0, 0.025], ids=["pace-0", "pace-25ms"])
def test_a_stream_reset_mid_event_replays_with_the_same_cut(pace: float) -> None:
    targets = {"llm": {"listener": "llm", "path": CHAT, "api": "openai"}}
    with RunningUpstream(event_gap_s=pace) as up, running_proxy(config_for({"llm": up.url}, targets)) as proxy:
        base = proxy.listeners["llm"]
        proxy.control.scenario("reset", llm_faults=[{"mode": "stream_reset", "after_events": 3}])
        recorded, exchanges = record(proxy.control, "s", lambda cell: chat_stream(base, cell))
        proxy.control.scenario(None)
        before = len(up.requests)
        session = Session(id="s", input="", exchanges=exchanges)
        replayed, _ = replay(proxy.control, session, lambda cell: chat_stream(base, cell))
        assert len(up.requests) == before
    assert exchanges[0].closed_mid_body and exchanges[0].declared_bytes is None  # chunked: no length promised
    assert len(exchanges[0].events or []) == 3
    assert recorded == replayed and recorded[0] == 200 and recorded[2] is not None, (recorded, replayed)
