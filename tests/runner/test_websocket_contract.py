"""A voice agent on the openai SDK's realtime client under a contract, end to end: the runner starts the proxy,
WebSocket faults break the agent's socket, and a careful agent that reconnects passes where a naive one fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

openai = pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")
websockets = pytest.importorskip("websockets")

import flakeproxy  # noqa: E402
from tests.runner.world import run  # noqa: E402
from tests.support.loops import free_port  # noqa: E402
from tests.support.realtime import RunningRealtime  # noqa: E402

ITEM = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is AAPL at?"}]}
MATRIX = [
    {"name": "calm"},
    {
        "name": "socket-closed-mid-answer",
        "llm_faults": [{"mode": "ws_close", "code": 1011, "at_event": "response.output_text.delta", "times": 1}],
    },
    {"name": "malformed-event", "llm_faults": [{"mode": "ws_corrupt", "at_event": "response.done", "times": 1}]},
]


def one_turn() -> str:
    """Connect, ask, read the answer's text until response.done (raises what the SDK raises)."""
    base = flakeproxy.listener_url("rt")
    client = openai.OpenAI(api_key="sk-test", base_url=f"{base}/v1", max_retries=0)
    cell = flakeproxy.current_cell() or ""
    try:
        with client.realtime.connect(model="gpt-realtime", extra_headers={"x-flakeproxy-cell": cell}) as conn:
            conn.conversation.item.create(item=ITEM)  # type: ignore[arg-type]
            conn.response.create()
            text = ""
            for event in conn:
                if event.type == "response.output_text.delta":
                    text += event.delta
                if event.type == "response.done":
                    return text
    finally:
        client.close()
    raise ConnectionError("the socket ended before response.done")


def naive(prompt: str) -> str:
    return one_turn()


def careful(prompt: str) -> str:
    """Reconnects and asks again when the socket closes abnormally or an event does not parse (twice at most)."""
    for attempt in range(3):
        try:
            return one_turn()
        except (websockets.exceptions.ConnectionClosed, ConnectionError, ValueError):
            if attempt == 2:
                return "The voice service is unavailable right now; please try again."
    raise AssertionError("unreachable")


def config(tmp_path: Path, agent: str, upstream: str) -> Path:
    data: dict[str, Any] = {
        "version": "2.0",
        "agent": {"type": "python", "callable": f"{__name__}:{agent}", "timeout_ms": 20000},
        "proxy": {
            "admin": f"127.0.0.1:{free_port()}",
            "listeners": [{"name": "rt", "listen": f"127.0.0.1:{free_port()}", "upstream": upstream}],
        },
        "targets": {"voice": {"listener": "rt", "path": "/v1/realtime*", "api": "openai", "ws": True}},
        "golden_prompts": ["What is AAPL trading at?"],
        "contract": {
            "name": "voice agent",
            "invariants": [
                {"id": "answers", "type": "completes", "severity": "critical"},
                {"id": "states-price", "type": "regex", "pattern": r"\$189\.50", "severity": "critical"},
            ],
        },
        "chaos_matrix": MATRIX,
        "run": {"seed": 7},
    }
    path = tmp_path / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("agent", "passes"), [("careful", True), ("naive", False)])
def test_a_careful_voice_agent_passes_and_a_naive_one_fails(tmp_path: Path, agent: str, passes: bool) -> None:
    with RunningRealtime() as server:
        result = run(config(tmp_path, agent, server.url), tmp_path / "out")
        connections = len(server.connections)
    assert result.score is not None and result.score.passed is passes, result.score
    outcomes = {(c.invariant, c.scenario): c.outcome for c in result.cells}
    assert outcomes[("answers", "calm")] == "pass"
    for scenario in ("socket-closed-mid-answer", "malformed-event"):
        assert outcomes[("answers", scenario)] == ("pass" if passes else "fail"), outcomes
        faults = [f for e in result.episodes if e.scenario == scenario for f in e.faults()]
        assert faults and all(f.applied for f in faults), faults  # applied and counted
    reconnects = 2 if passes else 0  # the careful agent reconnected once in each faulted episode
    assert connections == len(result.episodes) + reconnects, [e.scenario for e in result.episodes]


def _responses_turn(conn: Any, **create: Any) -> tuple[str, str]:
    """One response on an open Responses socket: (its id, its text); raises on an error event."""
    conn.response.create(model="gpt-5", **create)
    text = ""
    for event in conn:
        if event.type == "error":
            raise RuntimeError(f"{event.code}: {event.message}")
        if event.type == "response.output_text.delta":
            text += event.delta
        if event.type == "response.completed":
            return event.response.id, text
    raise ConnectionError("the socket ended before response.completed")


def _responses_agent(prompt: str, careful: bool) -> str:
    """Two turns on one Responses socket, the second chained by previous_response_id. When the socket dies in the
    second, it reconnects: the careful agent sends the whole conversation again (the new socket does not know
    the first response), the naive one sends previous_response_id again."""
    base = flakeproxy.listener_url("rt")
    client = openai.OpenAI(api_key="sk-test", base_url=f"{base}/v1", max_retries=0)
    headers = {"x-flakeproxy-cell": flakeproxy.current_cell() or ""}
    first: list[Any] = [{"role": "user", "content": prompt}]
    try:
        with client.responses.connect(extra_headers=headers) as conn:
            rid, said = _responses_turn(conn, input=first)
            try:
                return _responses_turn(conn, input="And in euros?", previous_response_id=rid)[1]
            except websockets.exceptions.ConnectionClosed as closed:
                cut = closed  # the agent goes on below, on a new socket
        assert cut.rcvd is not None and cut.rcvd.code == 1011
        with client.responses.connect(extra_headers=headers) as again:
            if careful:
                history = [*first, {"role": "assistant", "content": said}, {"role": "user", "content": "And in euros?"}]
                return _responses_turn(again, input=history)[1]
            return _responses_turn(again, input="And in euros?", previous_response_id=rid)[1]
    finally:
        client.close()


def responses_careful(prompt: str) -> str:
    return _responses_agent(prompt, careful=True)


def responses_naive(prompt: str) -> str:
    return _responses_agent(prompt, careful=False)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("agent", "passes"), [("responses_careful", True), ("responses_naive", False)])
def test_a_responses_agent_that_resends_its_history_after_a_reconnect_passes(
    tmp_path: Path, agent: str, passes: bool
) -> None:
    """The socket closes (1011) in the second turn; a new socket does not know the first response, so chaining by
    previous_response_id gets the API's previous_response_not_found."""
    with RunningRealtime() as server:
        path = config(tmp_path, agent, server.url)
        data = yaml.safe_load(path.read_text())
        data["targets"] = {
            "responses_ws": {"listener": "rt", "path": "/v1/responses", "api": "openai-responses", "ws": True}
        }
        second_turn = {"mode": "ws_close", "code": 1011, "after_messages": 11, "times": 1}  # 11 events in turn one
        data["chaos_matrix"] = [{"name": "calm"}, {"name": "socket-closed-in-turn-two", "llm_faults": [second_turn]}]
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        result = run(path, tmp_path / "out")
    assert result.score is not None and result.score.passed is passes, result.score
    outcomes = {(c.invariant, c.scenario): c.outcome for c in result.cells}
    assert outcomes[("answers", "calm")] == "pass"
    assert outcomes[("answers", "socket-closed-in-turn-two")] == ("pass" if passes else "fail"), outcomes
    faulted = [e for e in result.episodes if e.scenario == "socket-closed-in-turn-two"]
    assert all(f.applied for e in faulted for f in e.faults()) and all(e.faults() for e in faulted)
    if not passes:
        assert all("previous_response_not_found" in (e.error or "") for e in faulted), [e.error for e in faulted]
