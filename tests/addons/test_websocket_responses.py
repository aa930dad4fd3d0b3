"""Responses over WebSocket through the real proxy: the openai SDK's `responses.connect()` client against the fake
server's Responses stream events (tests.support.realtime), faults in the Responses API's own shapes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

openai = pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")
websockets = pytest.importorskip("websockets")

from tests.addons.test_websocket import Turn  # noqa: E402
from tests.support.proxy import Proxy, config_for, running_proxy  # noqa: E402
from tests.support.realtime import ANSWER, RealtimeServer, RunningRealtime  # noqa: E402

TARGETS = {"responses_ws": {"listener": "oa", "path": "/v1/responses", "api": "openai-responses", "ws": True}}


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[RealtimeServer, Proxy]]:
    with RunningRealtime() as server, running_proxy(config_for({"oa": server.url}, TARGETS)) as proxy:
        yield server, proxy


def turn(proxy: Proxy, episode: str, idle: bool = False) -> Turn:
    client = openai.OpenAI(api_key="sk-test", base_url=proxy.listeners["oa"] + "/v1", max_retries=0)
    seen, started = Turn(), time.monotonic()
    try:
        with client.responses.connect(extra_headers={"x-flakeproxy-cell": episode}) as conn:
            if not idle:
                conn.response.create(model="gpt-5", input="What is AAPL trading at?")
            for event in conn:
                seen.events.append(event)
                seen.at.append(time.monotonic() - started)
                if event.type == "response.completed":
                    break
    except Exception as e:  # what the SDK raised is what the test looks at
        seen.raised = e
    finally:
        client.close()
    return seen


def run(proxy: Proxy, fault: dict[str, Any] | None, **kw: Any) -> tuple[Turn, dict[str, Any]]:
    faults: dict[str, Any] = {"llm_faults": [fault]} if fault is not None else {}  # none: no scenario at all
    seen, (entry,) = proxy.control.in_episode(lambda e: turn(proxy, e, **kw), "ws" if faults else None, **faults)
    return seen, entry


def test_a_responses_socket_is_journaled_with_its_usage_bearing_events(world: tuple[RealtimeServer, Proxy]) -> None:
    seen, entry = run(world[1], None)
    assert seen.raised is None and seen.text == ANSWER and seen.events[-1].response.usage.total_tokens == 57
    assert entry["status"] == 101 and entry["targets"] == ["responses_ws"] and entry["fault"] is None
    assert (entry["usage"]["input_tokens"], entry["usage"]["output_tokens"], entry["usage"]["model"]) == (
        45,
        12,
        "gpt-5",
    )
    texts = [m["text"] for m in entry["websocket"]["messages"]]
    assert '"response.create"' in texts[0] and '"response.completed"' in texts[-1]


def test_ws_error_event_is_the_responses_error_event(world: tuple[RealtimeServer, Proxy]) -> None:
    fault = {"mode": "ws_error_event", "at_event": "response.created", "code": "server_error", "message": "boom"}
    seen, entry = run(world[1], fault)
    error = seen.events[0]
    assert (error.type, error.code, error.message, error.sequence_number) == ("error", "server_error", "boom", 0)
    assert seen.raised is None and seen.text == ANSWER and entry["fault"]["applied"]


def test_ws_close_mid_stream_raises_in_the_sdk(world: tuple[RealtimeServer, Proxy]) -> None:
    fault = {"mode": "ws_close", "code": 1011, "after_messages": 3}
    seen, entry = run(world[1], fault)
    assert isinstance(seen.raised, websockets.exceptions.ConnectionClosedError), seen.raised
    assert len(seen.events) == 3 and seen.raised.rcvd is not None and seen.raised.rcvd.code == 1011
    assert entry["fault"]["applied"] and entry["websocket"]["closed_by"] == "proxy"


def test_connection_cap_sends_the_connection_limit_error(world: tuple[RealtimeServer, Proxy]) -> None:
    seen, entry = run(world[1], {"mode": "connection_cap", "after_ms": 200}, idle=True)
    assert [e.type for e in seen.events] == ["error"] and seen.events[0].code == "websocket_connection_limit_reached"
    assert seen.raised is None and entry["fault"]["applied"] and entry["websocket"]["close_code"] == 1000


@pytest.mark.parametrize(
    ("fault", "check"),
    [
        ({"mode": "ws_rate_limit", "reset_s": 1}, lambda s: s.events[0].code == "rate_limit_exceeded"),
        (
            {"mode": "ws_stall", "stall_ms": 300, "at_event": "response.completed"},
            lambda s: s.at[-1] - s.at[-2] >= 0.28,
        ),
        ({"mode": "ws_delay", "delay_ms": 40}, lambda s: s.at[-1] - s.at[0] >= 0.04 * (len(s.at) - 1) * 0.9),
        ({"mode": "ws_drop", "at_event": "response.output_text.delta", "count": 1}, lambda s: s.text == ANSWER[4:]),
        ({"mode": "ws_corrupt", "at_event": "response.output_text.delta"}, lambda s: s.raised is not None),
    ],
    ids=["ws_rate_limit", "ws_stall", "ws_delay", "ws_drop", "ws_corrupt"],
)
def test_each_websocket_fault_is_applied_and_seen_by_the_responses_client(
    world: tuple[RealtimeServer, Proxy], fault: dict[str, Any], check: Any
) -> None:
    seen, entry = run(world[1], fault)
    assert check(seen), (seen.types, seen.at, seen.raised)
    assert entry["fault"]["applied"] and entry["fault"]["kind"] == fault["mode"], entry["fault"]
