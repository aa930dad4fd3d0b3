"""POST /episodes/{id}/turn: the turn of its conversation an episode runs; its requests carry it, faults with
`turns:` fire only on theirs while after_calls and times count across turns; bad bodies say what is wrong."""

from __future__ import annotations

import pytest

from tests.support.http import fetch
from tests.support.proxy import Proxy
from tests.support.upstream import Upstream

TARGETS = {"quotes": {"listener": "tools", "path": "/v1/quotes*"}}
ON_TURN_2 = {"tool": "quotes", "mode": "error", "error_code": 503, "turns": [2], "times": 1}
FROM_CALL_3 = {"tool": "quotes", "mode": "error", "error_code": 500, "after_calls": 3}
MATRIX = {
    "chaos_matrix": [{"name": "turn-2", "tool_faults": [ON_TURN_2]}, {"name": "call-3", "tool_faults": [FROM_CALL_3]}]
}


#: the module's world (tests/addons/conftest.py: a real upstream and proxy from TARGETS and MATRIX), reset per test
pytestmark = pytest.mark.usefixtures("clean")


def _turns(proxy: Proxy, scenario: str, calls: list[int]) -> list[tuple[int | None, int]]:
    """Open an episode of `scenario`, make calls[n] requests on turn n + 1; (turn, status) of each request, and
    of each fault record the turn it says it fired on."""
    episode = proxy.control.ok("POST", "/episodes", {"label": scenario, "scenario": scenario})["id"]
    for n, count in enumerate(calls, 1):
        answer = proxy.control.ok("POST", f"/episodes/{episode}/turn", {"turn": n})
        assert answer["id"] == episode and answer["turn"] == n
        for _ in range(count):
            fetch(proxy.listeners["tools"], "/v1/quotes")
    journal = proxy.control.end(episode)
    assert all(e["fault"]["turn"] == e["turn"] for e in journal if e["fault"])
    return [(e.get("turn"), e["status"]) for e in journal]


def test_a_fault_limited_to_turn_2_fires_there_and_its_record_says_so(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    assert _turns(proxy, "turn-2", [2, 2, 1]) == [(1, 200), (1, 200), (2, 503), (2, 200), (3, 200)]


def test_after_calls_counts_across_turns(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    # the 3rd matching call of the episode is turn 2's first: the counter did not restart with the turn
    assert _turns(proxy, "call-3", [2, 2]) == [(1, 200), (1, 200), (2, 500), (2, 500)]


def test_an_episode_never_told_a_turn_has_no_turn_in_its_journal(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    episode = proxy.control.ok("POST", "/episodes", {"label": "x", "scenario": "turn-2"})["id"]
    fetch(proxy.listeners["tools"], "/v1/quotes")
    [entry] = proxy.control.end(episode)
    assert "turn" not in entry and entry["status"] == 200  # a one-turn prompt is turn 1: not turn 2


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"turn": 0}, "turn must be an integer from 1 (the first turn), got 0"),
        ({"turn": "2"}, 'turn must be an integer from 1 (the first turn), got "2"'),
        ({"turn": True}, "turn must be an integer from 1 (the first turn), got true"),
        ({"trun": 2}, "unknown keys ['trun']"),
    ],
)
def test_bad_turn_bodies(world: tuple[Upstream, Proxy], body: dict[str, object], says: str) -> None:
    control = world[1].control
    episode = control.ok("POST", "/episodes", {"label": "x"})["id"]
    status, answer = control.call("POST", f"/episodes/{episode}/turn", body)
    assert (status, answer["error"]) == (400, says)
    status, answer = control.call("POST", "/episodes/nope/turn", {"turn": 1})
    assert status == 404 and answer["error"] == "no open episode 'nope'"
