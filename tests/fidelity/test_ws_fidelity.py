"""WebSocket fidelity: the openai SDK's realtime client sees the same against a server that really fails
(tests.fidelity.ws_failures) and through flakeproxy with the matching fault over a healthy server: the events
it yields (their types, the text, each error event's type and code), what it raises and the close code, and
for the timing faults the same wait (a lower bound on both)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

from tests.addons.test_websocket import TARGETS, Turn, talk
from tests.fidelity import ws_failures as real
from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.realtime import RealtimeServer, RunningRealtime

ROWS: list[tuple[dict[str, Any], type[real.Failure], dict[str, Any]]] = [
    ({"mode": "ws_close", "code": 1011, "reason": "upstream failed", "at_event": "response.output_text.delta"},
     real.ClosesMidAnswer, {}),
    ({"mode": "ws_error_event", "at_event": "response.created", "code": "server_error", "message": "boom"},
     real.ErrorEvent, {}),
    ({"mode": "ws_rate_limit", "reset_s": 2}, real.RateLimited, {}),
    ({"mode": "ws_stall", "stall_ms": 400, "at_event": "response.done"}, real.StallsBeforeDone, {}),
    ({"mode": "ws_delay", "delay_ms": 60, "at_event": "response.output_text.delta"}, real.SlowDeltas, {}),
    ({"mode": "ws_drop", "at_event": "response.output_text.delta", "count": 2}, real.LosesDeltas, {}),
    ({"mode": "ws_corrupt", "at_event": "response.output_text.delta"}, real.MalformedEvent, {}),
    ({"mode": "connection_cap", "after_ms": 300}, real.SessionExpires, {"idle": True}),
]  # fmt: skip


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[RealtimeServer, Proxy]]:
    with RunningRealtime() as server, running_proxy(config_for({"rt": server.url}, TARGETS)) as proxy:
        yield server, proxy


def sees(turn: Turn) -> dict[str, Any]:
    """What the agent's code can tell apart: not event ids or exact timings."""
    raised = turn.raised
    rcvd = getattr(raised, "rcvd", None)
    return {
        "types": turn.types,
        "text": turn.text,
        "errors": [(e.error.type, e.error.code) if e.type == "error" else None for e in turn.events],
        "limits": [[r.remaining for r in e.rate_limits] for e in turn.events if e.type == "rate_limits.updated"],
        "raised": type(raised).__name__ if raised is not None else None,
        "close": (rcvd.code, rcvd.reason) if rcvd is not None else None,
    }


def span(turn: Turn) -> float:
    """Seconds from the first text delta (or the start) to the last event."""
    deltas = [t for t, k in zip(turn.at, turn.types, strict=True) if k == "response.output_text.delta"]
    return turn.at[-1] - (deltas[0] if deltas else 0.0)


@pytest.mark.parametrize(("fault", "failure", "kw"), ROWS, ids=[str(f["mode"]) for f, _, _ in ROWS])
def test_the_realtime_client_sees_the_fault_as_the_real_failure(
    world: tuple[RealtimeServer, Proxy], fault: dict[str, Any], failure: type[real.Failure], kw: dict[str, Any]
) -> None:
    server, proxy = world
    server.failure = failure
    try:
        direct = talk(server.url, {}, **kw)
    finally:
        server.failure = None
    faulted, (entry,) = proxy.control.in_episode(
        lambda episode: talk(proxy.listeners["rt"], {"x-flakeproxy-cell": episode}, **kw), "ws", llm_faults=[fault]
    )
    assert sees(faulted) == sees(direct)
    assert entry["fault"]["applied"], entry["fault"]
    if fault["mode"] in ("ws_stall", "ws_delay", "connection_cap"):
        least = {"ws_stall": 0.4, "ws_delay": 0.06 * (sum(k.endswith("delta") for k in direct.types) - 1)}
        floor = least.get(fault["mode"], 0.3) * 0.95
        assert span(direct) >= floor and span(faulted) >= floor, (span(direct), span(faulted))
