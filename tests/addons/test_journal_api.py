"""GET /journal pages through the journal by seq, per cell or unattributed; bad queries are 400 JSON."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.http import fetch
from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.upstream import RunningUpstream, Upstream

TARGETS = {"quotes": {"listener": "tools", "path": "/v1/quotes*"}}


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[Upstream, Proxy]]:
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, TARGETS)) as proxy:
        yield up, proxy


@pytest.fixture(autouse=True)
def clean(world: tuple[Upstream, Proxy]) -> None:
    world[1].control.ok("POST", "/reset")


def pages(proxy: Proxy, query: str) -> list[list[int]]:
    """Follow `next` from the first page; the seqs of each page."""
    out, since = [], 0
    while True:
        page: dict[str, Any] = proxy.control.ok("GET", f"/journal?{query}&since={since}")
        out.append([e["seq"] for e in page["entries"]])
        assert page["dropped"] == 0
        if page["next"] is None:
            return out
        since = page["next"]


def test_pages_cover_every_entry_once_in_order(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    for i in range(5):
        fetch(proxy.listeners["tools"], f"/v1/quotes?symbol=S{i}")
    seqs = [e["seq"] for e in proxy.control.journal()]
    assert len(seqs) == 5 and seqs == sorted(seqs)
    assert pages(proxy, "limit=2") == [seqs[:2], seqs[2:4], seqs[4:]]
    assert pages(proxy, "limit=5") == [seqs]


def test_a_cell_page_and_the_unattributed_page(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    a, b = proxy.control.begin(), proxy.control.begin()
    fetch(proxy.listeners["tools"], "/v1/quotes", headers={"x-flakeproxy-cell": a})
    fetch(proxy.listeners["tools"], "/v1/quotes")  # two cells open, no header: nobody's
    fetch(proxy.listeners["tools"], "/v1/quotes", headers={"x-flakeproxy-cell": b})
    fetch(proxy.listeners["tools"], "/v1/quotes")
    everything = proxy.control.journal()
    loose = [e["seq"] for e in everything if e["episode"] is None]
    assert len(loose) == 2
    assert pages(proxy, "unattributed=1&limit=1") == [[loose[0]], [loose[1]]]
    page = proxy.control.ok("GET", f"/journal?episode={a}")
    assert [e["episode"] for e in page["entries"]] == [a] and page["next"] is None
    assert [e["episode"] for e in proxy.control.end(b)] == [b]


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("since=-1", "since must be an integer >= 0, got '-1'"),
        ("since=x", "since must be an integer >= 0, got 'x'"),
        ("limit=0", "limit must be an integer >= 1, got '0'"),
        ("limit=10001", "limit must be at most 10000, got 10001; page with since= and next"),
        (
            "episode=a/b",
            "episode id 'a/b' is not valid: use 1-128 letters, digits, '.', '_', ':' or '-' (e.g. 'e12.r0')",
        ),
        ("unattributed=yes", "unattributed must be 1 or 0, got 'yes'"),
        ("episode=c1&unattributed=1", "episode and unattributed=1 exclude each other; ask for one"),
        ("sinse=3", "unknown query parameters ['sinse']"),
    ],
)
def test_bad_journal_queries(world: tuple[Upstream, Proxy], query: str, says: str) -> None:
    status, body = world[1].control.call("GET", f"/journal?{query}")
    assert (status, body["error"]) == (400, says)
