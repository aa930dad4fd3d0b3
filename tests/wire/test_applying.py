"""An Action applied phase by phase (flakeproxy.wire.applying), per fault kind: what each phase gives the
transport and what it notes on the Coverage. Pure: no proxy, no socket. The proxy's and the python adapter's
tests show the same phases on real connections; these pin the decisions and the record they leave."""

from __future__ import annotations

import json
from random import Random
from typing import Any

import pytest

from flakeproxy.wire.action import Action, Reply
from flakeproxy.wire.applying import CLOSE, Applying, Close, NewAnswer
from flakeproxy.wire.call import Call
from flakeproxy.wire.coverage import Coverage
from flakeproxy.wire.sse import format_event
from tests.faults.test_act_table import ANY_FAULT, OPENAI, REALTIME, TABLE, TOOL

QUOTE = json.dumps({"symbol": "AAPL", "price": 187.5, "source": "nasdaq"}).encode()
CHAT = json.dumps(
    {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "the price is 187"}, "finish_reason": "stop"}
        ]
    }
).encode()
ASKED = json.dumps({"model": "m", "messages": [{"role": "user", "content": "price of AAPL?"}]}).encode()
SSE = b"".join(
    format_event({"choices": [{"index": 0, "delta": {"content": w}, "finish_reason": None}]})
    for w in ("the ", "price ", "is ", "187")
) + format_event("[DONE]")


def applying(fault: dict[str, Any], call: Call) -> Applying:
    kind = fault.get("mode") or fault["type"]
    return Applying(ANY_FAULT.validate_python(fault).act(call, Random(3)), Coverage(kind))


def run(a: Applying, request: bytes, answer: bytes | None, sse: bool = False) -> dict[str, Any]:
    """The phases in a call's order as a transport runs them; what each gave back, by what the transport does."""
    seen: dict[str, Any] = {"delay_ms": a.delay_ms()}
    stop = a.stop()
    if stop is not None:
        seen["stop"] = "close" if isinstance(stop, Close) else stop.status
    elif a.rewrites_request:
        seen["request"] = a.request(request) is not None
    if stop is None and answer is not None and sse:
        transform = a.streamed(None)
        if transform is not None:
            out = transform.feed(answer) + transform.finish()
            seen["stream"] = "changed" if out != answer else "same"
    elif stop is None and answer is not None and a.unstreamed():
        new = a.answer(answer)
        seen["answer"] = None if new is None else (new.length, new.error)
    a.coverage.finish()
    return seen


JSON_REWRITTEN = "response body rewritten ("
NOT_STREAMED = "the agent asked for no stream: the answer came whole, and {} acts on streamed answers only"
NOTHING = "the fault changed nothing in the answer ({}: nothing to rewrite)"
#: (fault, call, answer as the upstream sends it (None: a WebSocket upgrade), whether it is an event stream,
#:  what each phase gave the transport, the coverage's effect and reason: each the start of the recorded text)
ROWS: list[tuple[dict[str, Any], Call, bytes | None, bool, dict[str, Any], str | None, str | None]] = [
    ({"mode": "error", "error_code": 502}, TOOL, QUOTE, False, {"stop": 502}, "replied 502", None),
    ({"mode": "rate_limit", "retry_after_s": 3}, TOOL, QUOTE, False, {"stop": 429}, "replied 429", None),
    ({"mode": "empty", "status": 204}, TOOL, QUOTE, False, {"stop": 204}, "replied 204", None),
    ({"mode": "reset"}, TOOL, QUOTE, False, {"stop": "close"}, "connection closed", None),
    (
        {"mode": "timeout", "delay_ms": 250},
        TOOL,
        QUOTE,
        False,
        {"delay_ms": 250, "stop": "close"},
        "delayed 250 ms, connection closed",
        None,
    ),
    (
        {"mode": "timeout", "delay_ms": 250, "end": "gateway_timeout"},
        TOOL,
        QUOTE,
        False,
        {"delay_ms": 250, "stop": 504},
        "delayed 250 ms, replied 504",
        None,
    ),
    ({"mode": "slow", "delay_ms": 400}, TOOL, QUOTE, False, {"delay_ms": 400}, "delayed 400 ms", None),
    ({"mode": "slow", "delay_ms": 0}, TOOL, QUOTE, False, {}, None, "the fault changed nothing (slow: nothing to do"),
    ({"mode": "empty"}, OPENAI, CHAT, False, {"answer": (None, None)}, JSON_REWRITTEN, None),
    ({"mode": "empty"}, OPENAI, SSE, True, {"stream": "changed"}, "stream rewritten", None),
    (
        {"mode": "truncated", "keep_fraction": 0.25},
        TOOL,
        QUOTE,
        False,
        {"answer": (len(QUOTE), f"connection closed by fault mid-body after 13 of {len(QUOTE)} bytes")},
        f"response body rewritten ({len(QUOTE)} -> 13 bytes)",
        None,
    ),
    (
        {"mode": "truncated", "keep_fraction": 0.25},
        TOOL,
        SSE,
        True,
        {},
        None,
        "the answer was streamed; truncated rewrites only answers that are not streamed",
    ),
    (
        {"mode": "schema_drift", "rename": {"price": "cost"}},
        TOOL,
        QUOTE,
        False,
        {"answer": (None, None)},
        JSON_REWRITTEN,
        None,
    ),
    (
        {"mode": "schema_drift", "rename": {"cost": "price"}},
        TOOL,
        QUOTE,
        False,
        {"answer": None},
        None,
        NOTHING.format("schema_drift"),
    ),
    (
        {"mode": "truncated_response", "max_tokens": 2},
        OPENAI,
        CHAT,
        False,
        {"answer": (None, None)},
        JSON_REWRITTEN,
        None,
    ),
    ({"mode": "stream_cut", "after_events": 2}, OPENAI, SSE, True, {"stream": "changed"}, "stream ended after 2", None),
    ({"mode": "stream_cut", "after_events": 2}, OPENAI, CHAT, False, {}, None, NOT_STREAMED.format("stream_cut")),
    (
        {"mode": "stream_cut", "after_events": 9},
        OPENAI,
        SSE,
        True,
        {"stream": "same"},
        None,
        NOTHING.format("stream_cut"),
    ),
    (
        {"mode": "mid_stream_error", "after_events": 1},
        OPENAI,
        CHAT,
        False,
        {},
        None,
        NOT_STREAMED.format("mid_stream_error"),
    ),
    ({"mode": "garbage"}, OPENAI, SSE, True, {"stream": "changed"}, "stream rewritten", None),
    (
        {"mode": "stream_reset", "after_events": 2},
        OPENAI,
        SSE,
        True,
        {"stream": "changed"},
        "stream ended after 2",
        None,
    ),
    (
        {"mode": "stream_reset", "after_events": 2},
        OPENAI,
        CHAT,
        False,
        {"answer": (len(CHAT), f"connection cut by fault mid-body after 58 of {len(CHAT)} bytes")},
        f"response body rewritten ({len(CHAT)} -> 58 bytes)",
        None,
    ),
    (
        {"type": "indirect_injection", "canary": "CANARY-7"},
        TOOL,
        QUOTE,
        False,
        {"answer": (None, None)},
        JSON_REWRITTEN,
        None,
    ),
    (
        {"type": "memory_poisoning", "payload": "refunds are free"},
        OPENAI,
        CHAT,
        False,
        {"request": True},
        "request body",
        None,
    ),
    ({"mode": "ws_close", "code": 1011}, REALTIME, None, False, {}, None, "the fault changed nothing (ws_close"),
]


@pytest.mark.parametrize(
    ("fault", "call", "answer", "sse", "seen", "effect", "reason"),
    ROWS,
    ids=[f"{next(iter(r[0].values()))}-{'sse' if r[3] else 'body'}" for r in ROWS],
)
def test_each_phase_gives_and_notes(
    fault: dict[str, Any],
    call: Call,
    answer: bytes | None,
    sse: bool,
    seen: dict[str, Any],
    effect: str | None,
    reason: str | None,
) -> None:
    a = applying(fault, call)
    assert run(a, ASKED, answer, sse) == {"delay_ms": 0, **seen}
    record = a.coverage.record()
    assert record["applied"] is (effect is not None) and record["settled"] is True
    for key, expected in (("effect", effect), ("not_applied_reason", reason)):
        assert (record[key] is None) if expected is None else record[key].startswith(expected), (key, record)


def test_a_request_rewrite_notes_what_it_changed_or_why_not() -> None:
    poison = {"type": "memory_poisoning", "payload": "refunds are free"}
    a = applying(poison, OPENAI)
    assert a.rewrites_request and b"refunds are free" in (a.request(ASKED) or b"")
    assert a.coverage.effects == {"request": f"request body rewritten ({len(ASKED)} -> 173 bytes)"}
    plain = applying(poison, OPENAI)
    assert plain.request(b"not json") is None
    assert plain.coverage.reason == "the fault changed nothing in the request (memory_poisoning: nothing to rewrite)"
    unread = applying(poison, OPENAI)
    assert unread.request(None, "the request was larger than 16 MiB") is None
    assert (unread.coverage.effects, unread.coverage.reason) == ({}, "the request was larger than 16 MiB")


@pytest.mark.parametrize(
    ("fault", "call"),
    [({"mode": "schema_drift", "rename": {"price": "cost"}}, TOOL), ({"mode": "truncated"}, TOOL)],
)
def test_an_answer_that_could_not_be_read_whole_notes_why(fault: dict[str, Any], call: Call) -> None:
    a = applying(fault, call)
    assert a.rewrites_answer and a.answer(None, "the answer's body could not be decoded") is None
    assert (a.coverage.effects, a.coverage.reason) == ({}, "the answer's body could not be decoded")


@pytest.mark.parametrize("fault", [{"mode": "slow", "delay_ms": 10}, {"mode": "stream_cut"}, {"mode": "reset"}])
def test_an_action_that_rewrites_nothing_notes_nothing_for_a_body(fault: dict[str, Any]) -> None:
    """A body that could not be read whole is no reason for a fault that never reads it."""
    a = applying(fault, OPENAI)
    assert not a.rewrites_request and not a.rewrites_answer
    assert a.request(None, "too large") is None and a.answer(None, "too large") is None and a.answer(CHAT) is None
    assert (a.coverage.effects, a.coverage.reason) == ({}, None)


def test_a_stream_it_cannot_re_encode_passes_and_says_why() -> None:
    a = applying({"mode": "stream_cut", "after_events": 1}, OPENAI)
    assert a.streamed("zstd, identity, x-unknown") is None
    assert (a.coverage.reason or "").startswith("compressed stream: ")


@pytest.mark.parametrize(
    ("fault", "resets"), [({"mode": "stream_reset", "after_events": 2}, True), ({"mode": "stream_cut"}, False)]
)
def test_only_a_reset_cuts_the_connection_where_the_stream_ends(fault: dict[str, Any], resets: bool) -> None:
    assert applying(fault, OPENAI).resets is resets


@pytest.mark.parametrize(
    ("fault", "call", "plan"),
    [
        ({"mode": "ws_close", "code": 1011}, REALTIME, "WsClose"),
        ({"mode": "ws_stall", "stall_ms": 50}, REALTIME, "WsHold"),
        ({"type": "indirect_injection", "canary": "CANARY-7"}, REALTIME, "WsRewrite"),  # each server message
        ({"mode": "slow", "delay_ms": 5}, REALTIME, None),
    ],
)
def test_a_websocket_gets_its_plan(fault: dict[str, Any], call: Call, plan: str | None) -> None:
    made = applying(fault, call).websocket()
    assert (type(made).__name__ if made is not None else None) == plan


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ({"mode": "ws_drop"}, "the upstream refused the WebSocket upgrade (403); ws_drop had no messages"),
        # a rewrite with no message to rewrite: nothing of its own to say
        ({"type": "indirect_injection", "canary": "CANARY-7"}, None),
    ],
)
def test_a_refused_upgrade_is_why_a_websocket_fault_did_not_apply(fault: dict[str, Any], reason: str | None) -> None:
    a = applying(fault, REALTIME)
    a.upgrade_refused(403)
    assert (a.coverage.effects, a.coverage.reason) == ({}, reason)


@pytest.mark.parametrize(("fault", "call", "expected"), TABLE, ids=[str(list(f.values())[:2]) for f, _, _ in TABLE])
def test_it_forwards_exactly_when_nothing_stops_the_call(
    fault: dict[str, Any], call: Call, expected: dict[str, Any]
) -> None:
    """Over every fault mode: the python adapter calls the tool when `forwards`, the proxy the upstream when
    stop() is None; the two agree, and a stop is noted as the fault's effect."""
    a = applying(fault, call)
    forwards, stop = a.forwards, a.stop()
    assert forwards is (stop is None)
    assert a.coverage.applied is not forwards
    assert stop is None or stop is CLOSE or isinstance(stop, Reply)


def test_a_delay_is_noted_as_served_when_it_is_asked_for() -> None:
    """The agent waits from the moment the transport starts sleeping, even if it gives up before the end."""
    a = Applying(Action(delay_ms=120), Coverage("latency"))
    assert a.coverage.effects == {}
    assert a.delay_ms() == 120
    assert a.coverage.effects == {"delay": "delayed 120 ms"}


def test_a_rewritten_answer_is_whole_unless_the_action_keeps_the_length() -> None:
    a = Applying(Action(rewrite_body=lambda b: b[:3]), Coverage("k"))
    assert a.answer(b"abcdef") == NewAnswer(b"abc")
