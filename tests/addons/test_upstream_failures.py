"""Upstreams that fail: a connect that hangs, a silent upstream, one that stalls or resets mid-body.

Every case: the agent gets an answer (or a cut body) soon after the timeout, and the journal says what
the agent really got and why.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml

from flakeproxy.config.proxy import Listener
from tests.conftest import REPO
from tests.support.http import fetch
from tests.support.loops import LoopThread, free_port
from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.upstream import RunningUpstream

TIMEOUT_MS = 300
SLACK_S = 5.0  # the answer must come well before the client's own timeout (10 s)
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n"


@contextmanager
def raw_upstream(behaviour: str) -> Iterator[str]:
    """A TCP server that reads a request, then: 'silent' (answers nothing), 'stall' (headers and 9 of
    100 body bytes, then nothing) or 'reset' (the same 9 bytes, then a TCP reset)."""
    thread, port = LoopThread("raw-upstream"), free_port()
    writers: list[asyncio.StreamWriter] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        await reader.readuntil(b"\r\n\r\n")
        if behaviour in ("stall", "reset"):
            writer.write(HEAD + b'{"a": "12')
            await writer.drain()
        if behaviour == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return
        await reader.read()  # until the proxy gives up and closes

    async def start() -> asyncio.Server:
        return await asyncio.start_server(handle, "127.0.0.1", port)

    server = thread.run(start())
    try:
        yield f"http://127.0.0.1:{port}"
    finally:

        async def stop() -> None:
            server.close()
            for writer in writers:
                writer.close()
            await server.wait_closed()

        thread.run(stop())
        thread.close()


@contextmanager
def proxy_to(upstream: str, targets: dict[str, Any] | None = None) -> Iterator[Proxy]:
    data = yaml.safe_load(config_for({"up": upstream}, targets or {}))
    data["proxy"]["listeners"][0].update(connect_timeout_ms=TIMEOUT_MS, read_timeout_ms=TIMEOUT_MS)
    with running_proxy(yaml.safe_dump(data)) as proxy:
        yield proxy


def only_entry(proxy: Proxy) -> dict[str, Any]:
    [entry] = proxy.control.journal()
    assert entry["complete"], entry
    return entry


def test_the_defaults_are_documented() -> None:
    listener = Listener(name="x", listen="127.0.0.1:1", upstream="http://127.0.0.1:2")
    assert (listener.connect_timeout_ms, listener.read_timeout_ms) == (10_000, 120_000)
    page = (REPO / "docs" / "proxy.md").read_text()
    assert "`connect_timeout_ms` (default 10000) and `read_timeout_ms` (default 120000" in page


def test_a_silent_upstream_gets_a_504() -> None:
    targets = {"chat": {"listener": "up", "path": "/v1/chat/completions", "api": "openai"}}
    with raw_upstream("silent") as up, proxy_to(up, targets) as proxy:
        seen = fetch(proxy.listeners["up"], "/v1/chat/completions", "POST", b"{}")
        entry = only_entry(proxy)
    assert seen.status == 504 and TIMEOUT_MS / 1000 <= seen.elapsed < SLACK_S
    assert json.loads(seen.body)["error"]["message"] == f"upstream sent no response within {TIMEOUT_MS} ms"
    assert (entry["status"], entry["error"]) == (504, f"upstream sent no response within {TIMEOUT_MS} ms")


def test_a_stall_after_the_headers_ends_the_streamed_body() -> None:
    with raw_upstream("stall") as up, proxy_to(up) as proxy:
        seen = fetch(proxy.listeners["up"], "/anything")
        entry = only_entry(proxy)
    assert seen.status == 200 and seen.body == b'{"a": "12' and seen.error  # the body is cut short
    assert TIMEOUT_MS / 1000 <= seen.elapsed < SLACK_S
    assert (entry["status"], entry["error"]) == (200, f"upstream body stalled: no bytes for {TIMEOUT_MS} ms")
    assert entry["response_bytes"] == 9


def test_a_stall_of_a_buffered_body_is_a_502() -> None:
    """A rewrite fault buffers the body: the agent has seen nothing yet, so it gets a 502."""
    targets = {"api": {"listener": "up", "path": "/anything"}}
    with raw_upstream("stall") as up, proxy_to(up, targets) as proxy:
        proxy.control.scenario("s", tool_faults=[{"tool": "api", "mode": "truncated", "keep_fraction": 0.5}])
        seen = fetch(proxy.listeners["up"], "/anything")
        entry = only_entry(proxy)
    assert seen.status == 502 and TIMEOUT_MS / 1000 <= seen.elapsed < SLACK_S
    assert (entry["status"], entry["error"]) == (502, f"upstream body stalled: no bytes for {TIMEOUT_MS} ms")
    assert entry["fault"]["applied"] is False
    assert entry["fault"]["not_applied_reason"].startswith("the upstream failed before the fault could apply")


def test_a_connect_that_hangs_is_a_502() -> None:
    with socket.socket() as full:  # a listener whose backlog is full: further connects hang (SYNs dropped)
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        port = full.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=5), proxy_to(f"http://127.0.0.1:{port}") as proxy:
            seen = fetch(proxy.listeners["up"], "/anything")
            entry = only_entry(proxy)
    assert seen.status == 502 and TIMEOUT_MS / 1000 <= seen.elapsed < SLACK_S
    assert f"upstream connect timed out after {TIMEOUT_MS} ms".encode() in seen.body
    assert (entry["status"], entry["error"]) == (502, f"upstream connect timed out after {TIMEOUT_MS} ms")


def test_a_slow_stream_that_keeps_sending_is_not_cut() -> None:
    """The read deadline moves with each chunk: 5 events 100 ms apart take longer than the timeout."""
    with RunningUpstream() as up, proxy_to(up.url) as proxy:
        seen = fetch(proxy.listeners["up"], "/sse?n=5&gap=0.1")
        entry = only_entry(proxy)
    assert seen.status == 200 and seen.error is None and seen.body.count(b"data: ") == 5
    assert seen.elapsed >= 0.4 > TIMEOUT_MS / 1000 and entry["error"] is None


def test_a_reset_mid_body_is_journaled_as_the_agent_saw_it() -> None:
    """Streamed through: the agent saw 200 and a cut body; the journal says 200, the error, complete."""
    with raw_upstream("reset") as up, proxy_to(up) as proxy:
        seen = fetch(proxy.listeners["up"], "/anything")
        entry = only_entry(proxy)
    assert seen.status == 200 and seen.body == b'{"a": "12' and seen.error
    assert entry["status"] == 200 and entry["error"] and entry["response_bytes"] == 9


def test_a_reset_mid_buffered_body_is_journaled_as_the_502_the_agent_got() -> None:
    targets = {"api": {"listener": "up", "path": "/anything"}}
    with raw_upstream("reset") as up, proxy_to(up, targets) as proxy:
        proxy.control.scenario("s", tool_faults=[{"tool": "api", "mode": "truncated", "keep_fraction": 0.5}])
        seen = fetch(proxy.listeners["up"], "/anything")
        entry = only_entry(proxy)
    assert seen.status == 502
    assert entry["status"] == 502 and entry["error"] and entry["fault"]["applied"] is False
