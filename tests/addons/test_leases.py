"""Episode leases (addons/leases.py), on the real proxy: an episode opened with idle_ms ends by itself once no call
on it came for that long (its journal kept, its end then a 404 saying why), a call on it renews the lease, and one
opened without idle_ms stays open as long as it takes."""

from __future__ import annotations

import time

import pytest

from tests.support.http import fetch
from tests.support.proxy import Proxy
from tests.support.upstream import Upstream

TARGETS = {"quotes": {"listener": "tools", "path": "/v1/quotes*"}}
MATRIX = {"chaos_matrix": [{"name": "down", "tool_faults": [{"tool": "quotes", "mode": "error"}]}]}
DOWN = {"name": "down", "tool_faults": [{"tool": "quotes", "mode": "error", "error_code": 503}]}

#: the module's world (tests/addons/conftest.py: a real upstream and proxy from TARGETS and MATRIX), reset per test
pytestmark = pytest.mark.usefixtures("clean")


def _open(proxy: Proxy) -> list[str]:
    return list(proxy.control.ok("GET", "/healthz")["open_episodes"])


def _until_closed(proxy: Proxy, seconds: float, start: float) -> float:
    """Seconds from start until the proxy has no open episode (polled against a deadline)."""
    while _open(proxy):
        assert time.monotonic() - start < seconds, f"still open after {seconds} s: {_open(proxy)}"
        time.sleep(0.02)
    return time.monotonic() - start


def test_an_episode_no_one_calls_on_ends_when_its_lease_runs_out(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    start = time.monotonic()
    begun = proxy.control.ok("POST", "/episodes", {"id": "e1", "label": "x", "scenario": DOWN, "idle_ms": 300})
    assert begun == {"id": "e1", "label": "x", "scenario": "down", "idle_ms": 300}
    assert fetch(proxy.listeners["tools"], "/v1/quotes").status == 503  # the only open episode: it takes it
    took = _until_closed(proxy, 5, start)
    assert took >= 0.3, f"ended {took:.2f} s after it was opened, before its lease of 0.3 s ran out"
    assert fetch(proxy.listeners["tools"], "/v1/quotes").status == 200, "no episode left to fault it"
    status, body = proxy.control.call("POST", "/episodes/e1/end")
    assert (status, body["error"]) == (
        404,
        "episode 'e1' was ended by the proxy: no control call on it came for 300 ms (its idle_ms); its journal: "
        "GET /journal?episode=e1",
    )
    kept = proxy.control.ok("GET", "/journal?episode=e1")["entries"]
    assert [e["status"] for e in kept] == [503], "its journal is kept"


def test_a_call_on_the_episode_renews_its_lease(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    proxy.control.ok("POST", "/episodes", {"id": "e2", "scenario": DOWN, "idle_ms": 1500})
    start = time.monotonic()
    for turn in range(1, 16):  # a call every 0.2 s (a lease's worth of slack under load), for 3 s: twice the lease
        time.sleep(0.2)
        proxy.control.ok("POST", "/episodes/e2/turn", {"turn": turn})
    assert _open(proxy) == ["e2"], f"ended within {time.monotonic() - start:.1f} s although renewed"
    assert proxy.control.call("POST", "/episodes/e2/end")[0] == 200


def test_without_idle_ms_an_episode_stays_open(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    proxy.control.ok("POST", "/episodes", {"id": "e3", "scenario": DOWN})
    time.sleep(0.5)  # a lower bound: nothing may end it, so there is no event to wait for
    assert _open(proxy) == ["e3"]


@pytest.mark.parametrize("bad", [0, -5, 1.5, "300", True])
def test_idle_ms_must_be_a_positive_integer(world: tuple[Upstream, Proxy], bad: object) -> None:
    status, body = world[1].control.call("POST", "/episodes", {"idle_ms": bad})
    assert status == 400 and body["error"].startswith("idle_ms must be a positive integer (milliseconds), got ")
    assert _open(world[1]) == []


def test_reset_forgets_the_leases(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    proxy.control.ok("POST", "/episodes", {"id": "e4", "idle_ms": 200})
    proxy.control.ok("POST", "/reset")
    proxy.control.ok("POST", "/episodes", {"id": "e4"})  # the same id, without a lease: the old one is gone
    time.sleep(0.5)
    assert _open(proxy) == ["e4"]


def test_an_id_opened_again_after_it_expired_is_just_open(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    start = time.monotonic()
    proxy.control.ok("POST", "/episodes", {"id": "e5", "idle_ms": 100})
    _until_closed(proxy, 5, start)
    proxy.control.ok("POST", "/episodes", {"id": "e5"})
    assert proxy.control.call("POST", "/episodes/e5/end")[0] == 200
    status, body = proxy.control.call("POST", "/episodes/e5/end")
    assert (status, body["error"]) == (404, "no open episode 'e5'"), "not the expiry of the earlier e5"
