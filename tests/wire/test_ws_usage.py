"""A WebSocket's usage from its server's events: summed over responses, unknown when one never ended."""

from __future__ import annotations

import json
from typing import Any

from flakeproxy.wire.ws_usage import WsUsage

REALTIME_USAGE = {"input_tokens": 40, "output_tokens": 10, "input_token_details": {"cached_tokens": 8}}
RESPONSES_USAGE = {"input_tokens": 30, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 0}}


def fed(*events: dict[str, Any]) -> WsUsage:
    meter = WsUsage()
    for event in events:
        meter.feed(json.dumps(event).encode())
    return meter


def test_realtime_responses_are_summed_with_the_session_model() -> None:
    done = {"type": "response.done", "response": {"usage": REALTIME_USAGE}}
    created = {"type": "response.created", "response": {}}
    usage = fed(
        {"type": "session.created", "session": {"model": "gpt-realtime"}}, created, done, created, done
    ).finish()
    assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.model) == (80, 20, 16, "gpt-realtime")
    assert not usage.unknown


def test_a_responses_socket_reads_response_completed() -> None:
    done = {"type": "response.completed", "response": {"model": "gpt-5", "usage": RESPONSES_USAGE}}
    usage = fed({"type": "response.created"}, done).finish()
    assert (usage.input_tokens, usage.output_tokens, usage.model, usage.unknown) == (30, 5, "gpt-5", False)


def test_a_response_cut_off_makes_it_unknown_with_what_was_counted() -> None:
    done = {"type": "response.done", "response": {"usage": REALTIME_USAGE}}
    usage = fed({"type": "response.created"}, done, {"type": "response.created"}).finish()
    assert usage.unknown and usage.input_tokens == 40 and "still under way" in (usage.reason or "")


def test_an_ended_response_without_usage_is_unknown_and_no_response_is_zero() -> None:
    assert fed({"type": "response.created"}, {"type": "response.done", "response": {}}).finish().unknown
    idle = WsUsage()
    idle.feed(b"not json")
    usage = idle.finish()
    assert (usage.input_tokens, usage.output_tokens, usage.unknown) == (0, 0, False) and usage.reason
