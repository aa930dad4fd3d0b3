"""Episodes of different scenarios open at once in one proxy, each request tied to its episode exactly: by the
cell header, by W3C trace context (traceparent or baggage), or by the slot of listeners it came in on."""

from __future__ import annotations

import pytest
import yaml

from tests.support.http import fetch
from tests.support.loops import free_port
from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.upstream import RunningUpstream, Upstream

TARGETS = {"quotes": {"listener": "tools", "path": "/v1/quotes*"}}
MATRIX = {
    "chaos_matrix": [
        {"name": "calm"},
        {"name": "down", "tool_faults": [{"tool": "quotes", "mode": "error", "error_code": 503}]},
        {"name": "limited", "tool_faults": [{"tool": "quotes", "mode": "rate_limit"}]},
        {"name": "second-call", "tool_faults": [{"tool": "quotes", "mode": "error", "after_calls": 2, "times": 1}]},
    ]
}
TRACE_A = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACE_B = "0af7651916cd43dd8448eb211c80319c"


def traceparent(trace_id: str) -> str:
    return f"00-{trace_id}-00f067aa0ba902b7-01"


#: the module's world (tests/addons/conftest.py: a real upstream and proxy from TARGETS and MATRIX), reset per test
pytestmark = pytest.mark.usefixtures("clean")


def test_open_episodes_each_run_their_own_scenario(world: tuple[Upstream, Proxy]) -> None:
    _up, proxy = world
    control, url = proxy.control, proxy.listeners["tools"]
    proxy.control.scenario("limited")  # the active scenario: only cells that follow it use it
    down = control.ok("POST", "/episodes", {"label": "d", "scenario": "down"})["id"]
    calm = control.ok("POST", "/episodes", {"label": "c", "scenario": None})["id"]
    inline = control.ok("POST", "/episodes", {"label": "i", "scenario": {"name": "teapot", "tool_faults": [
        {"tool": "quotes", "mode": "error", "error_code": 418}]}})["id"]  # fmt: skip
    follows = control.ok("POST", "/episodes", {"label": "f"})["id"]
    seen = {cell: fetch(url, "/v1/quotes", headers={"x-flakeproxy-cell": cell}).status for cell in (down, calm, inline)}
    seen[follows] = fetch(url, "/v1/quotes", headers={"x-flakeproxy-cell": follows}).status
    assert seen == {down: 503, calm: 200, inline: 418, follows: 429}
    journal = {cell: control.end(cell) for cell in (down, calm, inline, follows)}
    assert [e["fault"]["scenario"] for e in journal[down]] == ["down"]
    assert journal[calm][0]["fault"] is None and journal[calm][0]["episode"] == calm


def test_fault_counters_are_per_cell_even_with_the_same_scenario(world: tuple[Upstream, Proxy]) -> None:
    _, proxy = world
    control, url = proxy.control, proxy.listeners["tools"]
    a = control.ok("POST", "/episodes", {"label": "a", "scenario": "second-call", "trace_id": TRACE_A})["id"]
    b = control.ok("POST", "/episodes", {"label": "b", "scenario": "second-call", "trace_id": TRACE_B})["id"]
    order = [TRACE_A, TRACE_B, TRACE_A, TRACE_A, TRACE_B]
    statuses = [fetch(url, "/v1/quotes", headers={"traceparent": traceparent(t)}).status for t in order]
    # after_calls: 2, times: 1, counted per cell: a's 2nd call fails, b's 2nd call fails, nothing else
    assert statuses == [200, 200, 503, 200, 503]
    assert {e["episode"] for e in control.end(a)} == {a} and {e["episode"] for e in control.end(b)} == {b}


def test_trace_context_ties_requests_to_their_episode(world: tuple[Upstream, Proxy]) -> None:
    up, proxy = world
    control, url = proxy.control, proxy.listeners["tools"]
    down = control.ok("POST", "/episodes", {"label": "d", "scenario": "down", "trace_id": TRACE_A})
    calm = control.ok("POST", "/episodes", {"label": "c", "scenario": None, "trace_id": TRACE_B})
    assert down["trace_id"] == TRACE_A and down["scenario"] == "down" and calm["scenario"] is None
    assert fetch(url, "/v1/quotes", headers={"traceparent": traceparent(TRACE_A)}).status == 503
    assert fetch(url, "/v1/quotes", headers={"traceparent": traceparent(TRACE_B)}).status == 200
    # baggage names the cell outright (an agent that propagates baggage but starts traces of its own)
    baggage = {"traceparent": traceparent("1" * 32), "baggage": f"user=x,flakeproxy.episode={down['id']}"}
    assert fetch(url, "/v1/quotes", headers=baggage).status == 503
    assert fetch(url, "/v1/quotes").status == 200  # no clue with two cells open: unattributed, no fault
    loose = [e for e in control.journal() if e["episode"] is None]
    assert len(loose) == 1 and loose[0]["episode_candidates"] == sorted([down["id"], calm["id"]])
    assert len(control.end(down["id"])) == 2 and len(control.end(calm["id"])) == 1
    sent = {k.lower(): v for k, v in up.requests[-2].headers.items()}
    assert sent["traceparent"] == traceparent(TRACE_B)  # the agent's trace context reaches the upstream


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"trace_id": "xyz"}, 400, "trace_id must be 32 lower-case hex digits"),
        ({"trace_id": "0" * 32}, 400, "trace_id must be 32 lower-case hex digits"),
        ({"slot": 0}, 400, "this proxy has no slots (proxy.slots), got slot 0; leave it out"),
        ({"scenario": "dwon"}, 404, "unknown scenario 'dwon'"),
        ({"scenario": 5}, 400, "scenario must be a name, a definition or null"),
        ({"seed": "7"}, 400, "seed must be an integer"),
    ],
)
def test_bad_cell_openings(world: tuple[Upstream, Proxy], body: dict[str, object], status: int, says: str) -> None:
    got, answer = world[1].control.call("POST", "/episodes", body)
    assert got == status and answer["error"].startswith(says), answer


def test_a_trace_id_belongs_to_one_open_cell(world: tuple[Upstream, Proxy]) -> None:
    control = world[1].control
    control.ok("POST", "/episodes", {"trace_id": TRACE_A})
    status, answer = control.call("POST", "/episodes", {"trace_id": TRACE_A})
    assert status == 409 and "belongs to open episode" in answer["error"]


def slotted_config(upstream: str, slots: int = 2) -> str:
    data = yaml.safe_load(config_for({"tools": upstream}, TARGETS, MATRIX))
    port = free_port()
    listener = data["proxy"]["listeners"][0]
    listener["slot_listen"] = [f"127.0.0.1:{free_port()}" for _ in range(slots)]
    listener["listen"] = f"127.0.0.1:{port}"
    data["proxy"]["slots"] = slots
    return yaml.safe_dump(data)


@pytest.mark.parametrize("how", ["header", "baggage", "trace"])
def test_a_request_naming_an_episode_that_ended_is_none_s_and_unbroken(world: tuple[Upstream, Proxy], how: str) -> None:
    """A trial's agent retried after the runner's timeout, still naming its episode: the proxy gave the retry to
    the only episode open, the next one, whose 500 it got (a false FAIL there). Now it is none's, passes
    unfaulted, and its journal entry says whom it named; one that names an episode never opened likewise."""
    up, proxy = world
    control, url = proxy.control, proxy.listeners["tools"]
    ended = control.ok("POST", "/episodes", {"label": "a", "scenario": None, "trace_id": TRACE_A})["id"]
    control.end(ended)
    down = control.ok("POST", "/episodes", {"label": "b", "scenario": "down", "trace_id": TRACE_B})["id"]
    named = {
        "header": {"x-flakeproxy-cell": ended},
        "baggage": {"baggage": f"flakeproxy.episode={ended}"},
        "trace": {"traceparent": traceparent(TRACE_A)},
    }[how]
    before = up.count("/v1/quotes")
    assert fetch(url, "/v1/quotes", headers=named).status == 200  # not the open episode's 503
    assert up.count("/v1/quotes") == before + 1
    if how == "header":
        assert fetch(url, "/v1/quotes", headers={"x-flakeproxy-cell": "never-opened"}).status == 200
    assert fetch(url, "/v1/quotes").status == 503  # naming none: the only open episode's, as before
    loose = control.ok("GET", "/journal?unattributed=1")["entries"]
    assert [(e["episode"], e["named_episode"], e["fault"]) for e in loose] == [(None, ended, None)] + (
        [(None, "never-opened", None)] if how == "header" else []
    )
    journal = control.end(down)
    assert [(e["status"], "named_episode" in e) for e in journal] == [(503, False)]


def test_slots_tie_requests_to_the_episode_their_slot_runs() -> None:
    with RunningUpstream() as up, running_proxy(slotted_config(up.url)) as proxy:
        health = proxy.control.ok("GET", "/healthz")
        assert health["slots"] == 2 and {"tools", "tools@0", "tools@1"} <= set(health["listeners"])
        slot_url = {k: f"http://{health['listeners'][f'tools@{k}']}" for k in (0, 1)}
        down = proxy.control.ok("POST", "/episodes", {"label": "d", "scenario": "down", "slot": 0})["id"]
        calm = proxy.control.ok("POST", "/episodes", {"label": "c", "scenario": None, "slot": 1})["id"]
        assert fetch(slot_url[0], "/v1/quotes").status == 503
        assert fetch(slot_url[1], "/v1/quotes").status == 200
        status, answer = proxy.control.call("POST", "/episodes", {"slot": 1})
        assert status == 409 and "slot 1 is busy" in answer["error"]
        [d] = proxy.control.end(down)
        [c] = proxy.control.end(calm)
        assert (d["episode"], d["slot"], c["episode"], c["slot"]) == (down, 0, calm, 1)
        # a slot with no episode open: its requests belong to nobody (reported, never given to another slot)
        other = proxy.control.ok("POST", "/episodes", {"label": "x", "scenario": "down", "slot": 0})["id"]
        assert fetch(slot_url[1], "/v1/quotes").status == 200
        loose = [e for e in proxy.control.journal() if e["episode"] is None]
        assert len(loose) == 1 and loose[0]["slot"] == 1 and loose[0]["episode_candidates"] == []
        assert proxy.control.end(other) == []
        assert len(up.requests) == 2  # the calm slot and the stray one; the faulted one never left the proxy
