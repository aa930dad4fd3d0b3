"""Which fault fires: seeded, counted per cell, the first matching fault wins."""

from __future__ import annotations

from typing import Any

from flakeproxy.config import Scenario
from flakeproxy.proxycore.injector import Injector, fault_seed
from flakeproxy.wire.call import Call, TargetSpec

TARGETS = {"quotes": TargetSpec("tools", "/v1/quotes*"), "llm": TargetSpec("llm", api="openai")}


def call(target: str = "quotes") -> Call:
    listener = TARGETS[target].listener
    return Call(listener, "GET", f"http://x/{target}", "/v1/quotes", {}, b"", (target,), TARGETS[target].api)


def injector(seed: int, **scenario: Any) -> Injector:
    inj = Injector(TARGETS)
    inj.set_scenario(Scenario.model_validate({"name": "s", **scenario}), seed)
    return inj


def sequence(seed: int, n: int = 40, **scenario: Any) -> list[str | None]:
    inj = injector(seed, **scenario)
    cell = inj.begin_episode().id
    out = []
    for _ in range(n):
        decision = inj.decide(call(), cell)
        out.append(decision.kind if decision else None)
    return out


HALF = {"tool_faults": [{"tool": "quotes", "mode": "error", "probability": 0.5}]}


def test_same_seed_same_faults_different_seed_different_faults() -> None:
    first, again, other = sequence(7, **HALF), sequence(7, **HALF), sequence(8, **HALF)
    assert first == again
    assert first != other
    assert 5 < first.count("error") < 35  # about half


def test_seed_is_a_pure_function_of_its_inputs() -> None:
    assert fault_seed(7, "s", "tool_faults", 0, 3) == fault_seed(7, "s", "tool_faults", 0, 3)
    assert len({fault_seed(7, "s", "tool_faults", 0, i) for i in range(100)}) == 100


def test_probability_zero_and_one() -> None:
    never = {"tool_faults": [{"tool": "quotes", "mode": "error", "probability": 0.0}]}
    always = {"tool_faults": [{"tool": "quotes", "mode": "error"}]}
    assert sequence(1, 10, **never) == [None] * 10
    assert sequence(1, 10, **always) == ["error"] * 10


def test_counters_are_per_cell_and_reset_with_the_scenario() -> None:
    inj = injector(0, tool_faults=[{"tool": "quotes", "mode": "error", "after_calls": 2, "times": 1}])
    a, b = inj.begin_episode().id, inj.begin_episode().id
    fired = [(c, bool(inj.decide(call(), c))) for c in (a, a, b, a, b)]
    assert fired == [(a, False), (a, True), (b, False), (a, False), (b, True)]


def test_first_matching_fault_wins_but_every_match_is_counted() -> None:
    inj = injector(
        0,
        tool_faults=[{"tool": "quotes", "mode": "slow", "times": 1}, {"tool": "*", "mode": "error", "after_calls": 2}],
    )
    cell = inj.begin_episode().id
    kinds = [d.kind if (d := inj.decide(call(), cell)) else None for _ in range(3)]
    assert kinds == ["slow", "error", "error"]


def test_llm_faults_aim_at_api_targets_only() -> None:
    inj = injector(0, llm_faults=[{"mode": "error"}])
    cell = inj.begin_episode().id
    assert inj.decide(call("quotes"), cell) is None
    decision = inj.decide(call("llm"), cell)
    assert decision is not None and decision.section == "llm_faults"


def test_no_scenario_no_fault() -> None:
    inj = Injector(TARGETS)
    assert inj.decide(call(), None) is None


def test_may_fault_is_judged_before_the_body() -> None:
    assert not Injector(TARGETS).may_fault(call())  # no scenario
    only_llm = injector(0, llm_faults=[{"mode": "error"}])
    assert only_llm.may_fault(call("llm")) and not only_llm.may_fault(call("quotes"))
    assert not injector(0, tool_faults=[{"tool": "quotes", "mode": "error"}]).may_fault(call("llm"))
    with_mcp = Injector({**TARGETS, "tool": TargetSpec("tools", mcp_tool="search")})
    with_mcp.set_scenario(Scenario.model_validate({"name": "s", "llm_faults": [{"mode": "error"}]}), 0)
    assert with_mcp.may_fault(call("quotes"))  # the MCP tool is named in the body: it must be read


def test_websocket_faults_fire_on_websocket_upgrades_only_and_count_connections() -> None:
    inj = injector(1, llm_faults=[{"mode": "ws_close", "after_calls": 2}, {"mode": "error"}])
    cell = inj.begin_episode().id
    plain = call("llm")
    upgrade = Call(
        "llm", "GET", "http://x/v1/realtime", "/v1/realtime", {"upgrade": "WebSocket"}, b"", ("llm",), "openai"
    )
    kinds = [(d.kind if (d := inj.decide(c, cell)) else None) for c in (plain, upgrade, plain, upgrade)]
    assert kinds == ["error", "error", "error", "ws_close"]  # the 1st connection is counted, the 2nd is closed
