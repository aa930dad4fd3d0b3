"""The WebSocket plans as tables: server messages in -> what each step does (pure: no proxy, no socket)."""

from __future__ import annotations

import json

import pytest

from flakeproxy.wire.websocket import (
    Trigger,
    WsCap,
    WsClose,
    WsCorrupt,
    WsDrop,
    WsHold,
    WsInject,
    WsPlan,
    WsRewrite,
    WsStep,
    corrupt,
    error_event,
    event_type,
    ws_api,
)


def ev(kind: str) -> bytes:
    return json.dumps({"type": kind}).encode()


STREAM = [ev("session.created"), ev("response.created"), ev("response.output_text.delta"), ev("response.done")]


def steps(plan: WsPlan) -> list[WsStep]:
    return [plan.server_message(m) for m in STREAM]


def test_event_type_reads_json_events_only() -> None:
    assert event_type(ev("response.done")) == "response.done"
    assert event_type(b"\x00\x01") is None and event_type(b"[1]") is None and event_type(b'{"type": 3}') is None


@pytest.mark.parametrize(
    ("path", "api"),
    [("/v1/realtime?model=m", "realtime"), ("/v1/responses", "responses"), ("/x?p=/realtime", "responses")],
)
def test_ws_api_by_path(path: str, api: str) -> None:
    assert ws_api(path) == api


def test_error_events_have_each_providers_shape() -> None:
    realtime = json.loads(error_event("realtime", "server_error", "x", "boom"))
    assert realtime["type"] == "error" and realtime["event_id"].startswith("event_")
    assert realtime["error"] == {
        "type": "server_error",
        "code": "x",
        "message": "boom",
        "param": None,
        "event_id": None,
    }
    responses = json.loads(error_event("responses", "server_error", "x", "boom"))
    assert responses == {"type": "error", "code": "x", "message": "boom", "param": None, "sequence_number": 0}


def test_trigger_after_messages_and_at_event() -> None:
    trigger = Trigger(after_messages=1, at_event="response.*")
    assert [trigger.hits(m) for m in STREAM] == [False, True, False, False]  # one-shot


def test_close_replaces_the_triggering_message() -> None:
    out = steps(WsClose(trigger=Trigger(at_event="response.output_text.delta"), code=1011, reason="bye"))
    assert [s.close for s in out] == [None, None, (1011, "bye"), None]
    assert out[2].deliver is None and out[3].deliver == STREAM[3]


def test_inject_puts_events_ahead_of_the_message_which_still_arrives() -> None:
    out = steps(WsInject(trigger=Trigger(after_messages=2), events=(b"E",)))
    assert [s.before for s in out] == [(), (), (b"E",), ()] and [s.deliver for s in out] == STREAM


def test_hold_once_is_a_stall_and_hold_each_is_a_delay() -> None:
    stall = steps(WsHold(trigger=Trigger(at_event="response.*"), delay_ms=50, once=True))
    delay = steps(WsHold(trigger=Trigger(at_event="response.*"), delay_ms=50, once=False))
    assert [s.delay_ms for s in stall] == [0, 50, 0, 0] and [s.delay_ms for s in delay] == [0, 50, 50, 50]


def test_drop_at_most_count() -> None:
    out = steps(WsDrop(trigger=Trigger(at_event="response.*"), count=2))
    assert [s.deliver for s in out] == [STREAM[0], None, None, STREAM[3]]


def test_corrupt_sends_json_that_does_not_parse() -> None:
    out = steps(WsCorrupt(trigger=Trigger(after_messages=3)))
    assert out[3].deliver == corrupt(STREAM[3]) and [s.deliver for s in out[:3]] == STREAM[:3]
    with pytest.raises(ValueError):
        json.loads(out[3].deliver or b"")


def test_cap_passes_messages_and_closes_on_its_timer() -> None:
    cap = WsCap(timer_ms=100, events=(b"E",), code=1000)
    assert [s.deliver for s in steps(cap)] == STREAM
    assert cap.on_timer() == WsStep(None, before=(b"E",), close=(1000, ""), effect="connection cap event injected")


def test_rewrite_changes_the_first_tool_answer_only_and_over_json_rpc_only_a_tools_call_result() -> None:
    plan = WsRewrite(rewrite=lambda b: b.replace(b"189", b"999"))
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "q"}}
    plan.client_message(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize"}).encode())
    plan.client_message(json.dumps(call).encode())
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"v": "189"}}).encode()
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/x", "params": {"v": "189"}}).encode()
    result = json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"v": "189"}}).encode()
    out = [plan.server_message(m) for m in (init, result, result)]
    assert [s.deliver for s in out] == [init, result.replace(b"189", b"999"), result]  # once, at the tools/call
    assert WsRewrite(rewrite=lambda b: b + b" ").server_message(b'{"a": 1}').deliver == b'{"a": 1}'  # same JSON
    assert plan.server_message(note).deliver == note  # done: nothing more changes
