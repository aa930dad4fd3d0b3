"""WebSocket connections through the real proxy: the openai SDK's realtime client, a fake Realtime server that
speaks the API's events (tests.support.realtime), each WebSocket fault applied, counted and seen by the SDK."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

openai = pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")
websockets = pytest.importorskip("websockets")

from tests.support.proxy import Proxy, config_for, running_proxy  # noqa: E402
from tests.support.realtime import ANSWER, RealtimeServer, RunningRealtime  # noqa: E402

TARGETS = {"voice": {"listener": "rt", "path": "/v1/realtime*", "api": "openai", "ws": True}}
SECRET = "sk-live-0123456789abcdef0123456789abcdef"


@pytest.fixture(scope="module", params=[0.0, 0.02], ids=["pace-0", "pace-20ms"])
def world(request: pytest.FixtureRequest) -> Iterator[tuple[RealtimeServer, Proxy]]:
    """The server's events at once, and at a real token pace (20 ms apart)."""
    server_at = RunningRealtime(pace_s=request.param)
    with server_at as server, running_proxy(config_for({"rt": server.url}, TARGETS)) as proxy:
        yield server, proxy


@dataclass
class Turn:
    """What the SDK's realtime client saw in one turn: the events, when each came, and what it raised."""

    events: list[Any] = field(default_factory=list)
    at: list[float] = field(default_factory=list)
    raised: BaseException | None = None

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    @property
    def text(self) -> str:
        return "".join(e.delta for e in self.events if e.type == "response.output_text.delta")


def turn(proxy: Proxy, episode: str, until: str = "response.done", idle: bool = False) -> Turn:
    """One voice-agent turn through the proxy (see talk)."""
    return talk(proxy.listeners["rt"], {"x-flakeproxy-cell": episode}, until, idle)


def talk(base: str, headers: dict[str, str], until: str = "response.done", idle: bool = False) -> Turn:
    """One voice-agent turn at base (http://HOST:PORT): session.update, a user message, response.create, then
    events until `until` (or the end of the connection). `idle`: ask for no response, only wait for events."""
    client = openai.OpenAI(api_key=SECRET, base_url=base + "/v1", max_retries=0)
    seen, started = Turn(), time.monotonic()
    try:
        with client.realtime.connect(model="gpt-realtime", extra_headers=headers) as conn:
            conn.session.update(session={"type": "realtime", "instructions": f"api_key={SECRET}"})
            if not idle:
                item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "AAPL?"}]}
                conn.conversation.item.create(item=item)
                conn.response.create()
            for event in conn:
                seen.events.append(event)
                seen.at.append(time.monotonic() - started)
                if event.type == until:
                    break
    except Exception as e:  # what the SDK raised is what the test looks at
        seen.raised = e
    finally:
        client.close()
    return seen


def run(proxy: Proxy, fault: dict[str, Any], **kw: Any) -> tuple[Turn, dict[str, Any]]:
    seen, journal = proxy.control.in_episode(lambda episode: turn(proxy, episode, **kw), "ws", llm_faults=[fault])
    (entry,) = [e for e in journal if e.get("websocket") is not None]
    return seen, entry


def test_a_connection_is_one_journal_entry_with_its_messages_attributed_and_redacted(
    world: tuple[RealtimeServer, Proxy],
) -> None:
    server, proxy = world
    episode = proxy.control.begin()
    seen = turn(proxy, episode)
    (entry,) = proxy.control.end(episode)
    assert seen.raised is None and seen.text == ANSWER and seen.types[-1] == "response.done"
    assert entry["episode"] == episode and entry["status"] == 101 and entry["targets"] == ["voice"]
    ws = entry["websocket"]
    kinds = [(m["from"], m["text"].split('"type": "', 1)[1].split('"', 1)[0]) for m in ws["messages"]]
    # the SDK sends session.update without waiting for session.created: which reaches the proxy first is a race
    assert next(k for k in kinds if k[0] == "server") == ("server", "session.created")
    assert ("client", "session.update") in kinds
    assert ("server", "response.done") in kinds and ("client", "response.create") in kinds
    assert ws["message_count"] == len(ws["messages"]) and ws["closed_by"] == "client" and ws["close_code"] == 1000
    assert SECRET not in str(entry) and SECRET in str(server.connections[-1].received)
    assert "x-flakeproxy-cell" not in server.connections[-1].headers  # removed from the upgrade, as on any request
    usage = entry["usage"]  # an LLM call: the usage of response.done, as the server reported it
    assert (usage["input_tokens"], usage["output_tokens"], usage["unknown"], usage["model"]) == (
        45,
        12,
        False,
        "gpt-realtime",
    )


def _fault(entry: dict[str, Any]) -> dict[str, Any]:
    fault: dict[str, Any] = entry["fault"]
    assert fault["settled"], fault
    return fault


def _server_close(server: RealtimeServer, within_s: float = 2.0) -> int | None:
    deadline = time.monotonic() + within_s
    while server.connections[-1].close_code is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return server.connections[-1].close_code


def test_ws_close_ends_the_socket_with_its_code_mid_response(world: tuple[RealtimeServer, Proxy]) -> None:
    fault = {"mode": "ws_close", "code": 1011, "reason": "upstream failed", "at_event": "response.output_text.delta"}
    seen, entry = run(world[1], fault)
    assert isinstance(seen.raised, websockets.exceptions.ConnectionClosedError), seen.raised
    assert seen.raised.rcvd is not None and (seen.raised.rcvd.code, seen.raised.rcvd.reason) == (
        1011,
        "upstream failed",
    )
    assert "response.created" in seen.types and "response.output_text.delta" not in seen.types
    assert _fault(entry)["applied"] and _fault(entry)["effect"] == "closed 1011 upstream failed"
    assert entry["websocket"]["closed_by"] == "proxy" and entry["websocket"]["close_code"] == 1011
    # the server got the same close (at a real pace it notices between two of its events: wait for it, bounded)
    assert _server_close(world[0]) == 1011


def test_ws_error_event_arrives_in_the_providers_shape_and_the_socket_stays_open(
    world: tuple[RealtimeServer, Proxy],
) -> None:
    fault = {"mode": "ws_error_event", "at_event": "response.created", "code": "server_error"}
    seen, entry = run(world[1], fault)
    assert seen.raised is None and seen.text == ANSWER  # the response still came, on the same socket
    error = seen.events[seen.types.index("error")]
    assert error.error.type == "server_error" and error.error.code == "server_error"
    assert seen.types.index("error") < seen.types.index("response.created")
    assert _fault(entry)["applied"] and "error event injected" in _fault(entry)["effect"]


def test_ws_rate_limit_sends_rate_limits_updated_then_the_error(world: tuple[RealtimeServer, Proxy]) -> None:
    seen, entry = run(world[1], {"mode": "ws_rate_limit", "reset_s": 2})
    limits = seen.events[seen.types.index("rate_limits.updated")]
    assert {r.name: r.remaining for r in limits.rate_limits} == {"requests": 0, "tokens": 0}
    error = seen.events[seen.types.index("error")]
    assert error.error.code == "rate_limit_exceeded" and "2s" in error.error.message
    assert _fault(entry)["applied"] and "rate limit" in _fault(entry)["effect"]


def test_ws_stall_holds_the_server_messages(world: tuple[RealtimeServer, Proxy]) -> None:
    seen, entry = run(world[1], {"mode": "ws_stall", "stall_ms": 400, "at_event": "response.done"})
    gap = seen.at[-1] - seen.at[-2]
    assert seen.types[-1] == "response.done" and gap >= 0.4 * 0.95, seen.at
    assert _fault(entry)["applied"] and _fault(entry)["effect"] == "held 400 ms"


def test_ws_delay_delays_each_matching_message(world: tuple[RealtimeServer, Proxy]) -> None:
    seen, entry = run(world[1], {"mode": "ws_delay", "delay_ms": 60, "at_event": "response.output_text.delta"})
    deltas = [t for t, kind in zip(seen.at, seen.types, strict=True) if kind == "response.output_text.delta"]
    assert seen.text == ANSWER and deltas[-1] - deltas[0] >= (len(deltas) - 1) * 0.06 * 0.95, deltas
    assert _fault(entry)["applied"]


def test_ws_drop_drops_the_matching_messages(world: tuple[RealtimeServer, Proxy]) -> None:
    seen, entry = run(world[1], {"mode": "ws_drop", "at_event": "response.output_text.delta", "count": 2})
    words = ANSWER.split(" ")
    assert seen.text == " " + " ".join(words[2:]) and seen.types[-1] == "response.done"
    assert _fault(entry)["applied"] and _fault(entry)["effect"] == "dropped 2 message(s)"
    dropped = [m for m in entry["websocket"]["messages"] if m.get("fault") == "dropped"]
    assert len(dropped) == 2


def test_ws_corrupt_sends_malformed_json(world: tuple[RealtimeServer, Proxy]) -> None:
    seen, entry = run(world[1], {"mode": "ws_corrupt", "at_event": "response.output_text.delta"})
    assert seen.raised is not None, seen.types  # the SDK cannot parse the event
    assert _fault(entry)["applied"] and _fault(entry)["effect"] == "malformed JSON sent"


def test_connection_cap_sends_the_providers_event_then_closes(world: tuple[RealtimeServer, Proxy]) -> None:
    seen, entry = run(world[1], {"mode": "connection_cap", "after_ms": 300}, idle=True)
    error = seen.events[seen.types.index("error")]
    assert error.error.code == "session_expired"
    assert seen.raised is None and seen.at[-1] >= 0.3 * 0.95  # a close with 1000 ends the SDK's iteration
    assert _fault(entry)["effect"] == "connection cap event injected, closed 1000"
    assert entry["websocket"]["close_code"] == 1000 and entry["websocket"]["closed_by"] == "proxy"


def test_a_refused_upgrade_leaves_a_websocket_fault_not_applied_and_says_why(
    world: tuple[RealtimeServer, Proxy],
) -> None:
    proxy = world[1]
    proxy.control.scenario("ws", llm_faults=[{"mode": "ws_close", "tool": "voice"}])
    episode = proxy.control.begin()
    headers = {"x-flakeproxy-cell": episode, "upgrade": "websocket", "connection": "Upgrade"}  # no key: refused
    try:
        request = urllib.request.Request(proxy.listeners["rt"] + "/v1/realtime", headers=headers)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        refused.value.close()
    finally:
        (entry,) = proxy.control.end(episode)
        proxy.control.scenario(None)
    assert entry["status"] == 426 and not entry["fault"]["applied"]
    assert (
        entry["fault"]["not_applied_reason"]
        == "the upstream refused the WebSocket upgrade (426); ws_close had no messages"
    )
