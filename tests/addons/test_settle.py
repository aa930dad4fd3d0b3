"""Ending a cell waits (at most 2 s) for its exchanges to reach the agent, so no entry is read half-decided, and
says which were still open."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.upstream import RunningUpstream

TARGETS = {"events": {"listener": "tools", "path": "/sse*"}}


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, TARGETS)) as running:
        yield running


def read_in_background(url: str, cell: str) -> threading.Thread:
    def read() -> None:
        with httpx.stream("GET", url, headers={"x-flakeproxy-cell": cell}, timeout=10) as response:
            for _ in response.iter_bytes():
                pass

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def until_seen(proxy: Proxy, cell: str) -> None:
    deadline = time.monotonic() + 5
    while not proxy.control.ok("GET", f"/journal?episode={cell}")["entries"]:
        assert time.monotonic() < deadline, "the request never reached the proxy"
        time.sleep(0.01)


def test_a_stream_that_ends_during_the_wait_is_read_whole(proxy: Proxy) -> None:
    cell = proxy.control.begin("settles")
    reader = read_in_background(f"{proxy.listeners['tools']}/sse?gap=0.1&n=4", cell)
    until_seen(proxy, cell)
    started = time.monotonic()
    ended = proxy.control.ok("POST", f"/episodes/{cell}/end")
    waited = time.monotonic() - started
    reader.join(5)
    [entry] = ended["journal"]
    assert ended["unsettled"] == [] and entry["complete"] and entry["response_bytes"] > 0, ended
    assert waited < 1.5, waited  # it waited for the stream's end (about 0.3 s), not the whole bound


def test_a_stream_still_open_after_the_bound_is_named(proxy: Proxy) -> None:
    cell = proxy.control.begin("stays-open")
    reader = read_in_background(f"{proxy.listeners['tools']}/sse?gap=0.5&n=12", cell)
    until_seen(proxy, cell)
    started = time.monotonic()
    ended = proxy.control.ok("POST", f"/episodes/{cell}/end")
    waited = time.monotonic() - started
    [entry] = ended["journal"]
    assert ended["unsettled"] == [entry["seq"]] and not entry["complete"], ended
    assert 1.9 <= waited < 4, waited
    reader.join(10)
