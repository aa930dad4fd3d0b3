"""Record and replay of WebSocket sessions through the real proxy: the realtime client's turn recorded with each
message and its time, and served back (messages, timing, the close) without the upstream."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

from flakeproxy.config.replays import Session
from flakeproxy.replay.build import exchange_from_entry
from tests.addons.test_websocket import TARGETS, Turn, talk
from tests.replay.test_proxy_replay import record, replay
from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.realtime import ANSWER, RealtimeServer, RunningRealtime


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[RealtimeServer, Proxy]]:
    with RunningRealtime() as server, running_proxy(config_for({"rt": server.url}, TARGETS)) as proxy:
        yield server, proxy


def agent(proxy: Proxy) -> Any:
    return lambda cell: talk(proxy.listeners["rt"], {"x-flakeproxy-cell": cell})


def recorded(proxy: Proxy, label: str) -> tuple[Turn, Session]:
    seen, exchanges = record(proxy.control, label, agent(proxy))
    return seen, Session(id=label, input="AAPL?", exchanges=exchanges)


def test_a_realtime_turn_is_recorded_with_its_messages_and_replayed_without_the_upstream(
    world: tuple[RealtimeServer, Proxy],
) -> None:
    server, proxy = world
    live, session = recorded(proxy, "voice turn")
    (exchange,) = session.exchanges
    assert exchange.status == 101 and exchange.messages is not None and exchange.closed_by_client
    senders = [m.sender for m in exchange.messages]
    assert senders[0] == "server" and senders.count("client") == 3  # session.update, item, response.create
    assert all(m.at_ms is not None for m in exchange.messages)
    before = len(server.connections)
    again, report = replay(proxy.control, session, agent(proxy))
    assert len(server.connections) == before, "the upstream was called during the replay"
    assert report["served"] == 1 and again.raised is None
    assert again.types == live.types and again.text == live.text == ANSWER


def test_a_recorded_fault_replays_its_effect_close_code_included(world: tuple[RealtimeServer, Proxy]) -> None:
    _, proxy = world
    with proxy.control.scenario_on(
        "ws", llm_faults=[{"mode": "ws_close", "code": 1011, "at_event": "response.output_item*"}]
    ):
        live, session = recorded(proxy, "voice cut")
    (exchange,) = session.exchanges
    assert (exchange.close_code, exchange.closed_by_client) == (1011, False) and exchange.fault is not None
    again, _ = replay(proxy.control, session, agent(proxy))
    assert again.types == live.types and type(again.raised) is type(live.raised)
    assert again.raised is not None and again.raised.rcvd.code == 1011


def test_a_replay_keeps_the_recorded_timing(world: tuple[RealtimeServer, Proxy]) -> None:
    _, proxy = world
    with proxy.control.scenario_on(
        "ws", llm_faults=[{"mode": "ws_stall", "stall_ms": 300, "at_event": "response.done"}]
    ):
        live, session = recorded(proxy, "voice stall")
    again, _ = replay(proxy.control, session, agent(proxy))
    assert again.types == live.types and again.types[-1] == "response.done"
    # the stall was recorded: by the proxy's clock (the agent's own, under load, may get the message before the
    # stalled one late and see a shorter gap: 0.237 s in one loaded run)
    server = [m.at_ms for m in session.exchanges[0].messages or [] if m.sender == "server" and m.at_ms is not None]
    assert server[-1] - server[-2] >= 300 * 0.9, server
    # and served again: each message at its recorded time from the start (so one delivered late under load makes
    # the gap after it shorter, never the whole turn); the live turn's own span can run long under load too
    # (0.317 s against the replay's 0.279 s in one CI run), so the replay is held to the stall it recorded
    spans = [turn.at[-1] - turn.at[0] for turn in (live, again)]
    assert spans[1] >= 0.3 * 0.9, spans


def test_a_session_exported_from_the_journal_replays_the_socket(world: tuple[RealtimeServer, Proxy]) -> None:
    """replay export --from results.json: the journal's messages (the dropped ones left out) make the exchange."""
    _, proxy = world
    drop = {"mode": "ws_drop", "at_event": "response.output_text.delta", "count": 1}
    live, (entry,) = proxy.control.in_episode(agent(proxy), "ws", "journaled", llm_faults=[drop])
    exchange = exchange_from_entry(entry)
    assert exchange.messages is not None and exchange.inexact is None
    again, report = replay(proxy.control, Session(id="j", input="AAPL?", exchanges=[exchange]), agent(proxy))
    assert report["served"] == 1 and again.types == live.types and again.text == live.text != ANSWER
