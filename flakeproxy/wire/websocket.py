"""What a fault does to a WebSocket connection, message by message: pure plans the proxy's addon applies.

A plan sees each message the server sends the agent (in order, with its `type` when it is a JSON event) and
answers with a WsStep: deliver it (changed or not), drop it, hold it first, inject events before it, or close the
connection after it with a code and reason. A plan with `timer_ms` is also told when that much time has passed
since the connection opened (a connection cap). Messages the agent sends pass untouched.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from flakeproxy.wire.json_edit import same_content

#: Which provider's event shapes a WebSocket endpoint speaks (by its path).
WsApi = Literal["realtime", "responses"]
_EVENT_IDS = itertools.count(1)


def ws_api(path: str) -> WsApi:
    """OpenAI's Realtime API lives under /v1/realtime; every other OpenAI WebSocket is Responses over WebSocket."""
    return "realtime" if "/realtime" in path.split("?", 1)[0] else "responses"


def event_type(content: bytes) -> str | None:
    """The `type` of a JSON event, or None (binary, not JSON, or no type)."""
    try:
        data = json.loads(content)
    except ValueError:
        return None
    kind = data.get("type") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


def error_event(api: WsApi, error_type: str, code: str | None, message: str) -> bytes:
    """The provider's own `error` event: Realtime nests it under `error` with an event_id; Responses over
    WebSocket sends the Responses stream's error event (code, message, param at the top)."""
    if api == "realtime":
        error = {"type": error_type, "code": code, "message": message, "param": None, "event_id": None}
        return json.dumps({"type": "error", "event_id": f"event_fp{next(_EVENT_IDS)}", "error": error}).encode()
    return json.dumps({"type": "error", "code": code, "message": message, "param": None, "sequence_number": 0}).encode()


def rate_limits_event(reset_s: float) -> bytes:
    """Realtime's `rate_limits.updated` with nothing left of requests and tokens until reset_s."""
    limits = [
        {"name": name, "limit": limit, "remaining": 0, "reset_seconds": reset_s}
        for name, limit in (("requests", 1000), ("tokens", 50000))
    ]
    return json.dumps(
        {"type": "rate_limits.updated", "event_id": f"event_fp{next(_EVENT_IDS)}", "rate_limits": limits}
    ).encode()


def corrupt(content: bytes) -> bytes:
    """A malformed JSON event: the first half of the message, cut inside it (never valid JSON)."""
    return content[: max(1, len(content) // 2)] + b'"\x00}'


@dataclass(frozen=True)
class WsStep:
    """What to do with one server message: `deliver` None drops it; `before` are events injected to the agent
    ahead of it; `close` (code, reason) closes the connection after it; `effect` notes what changed (coverage)."""

    deliver: bytes | None
    delay_ms: int = 0
    before: tuple[bytes, ...] = ()
    close: tuple[int, str] | None = None
    effect: str | None = None


@dataclass
class Trigger:
    """When a one-shot plan acts: on the first server message after `after_messages` of them whose event type
    matches `at_event` (a glob; None: any message)."""

    after_messages: int = 0
    at_event: str | None = None
    seen: int = 0
    fired: bool = False

    def hits(self, content: bytes) -> bool:
        self.seen += 1
        if self.fired or self.seen <= self.after_messages:
            return False
        if self.at_event is not None and not fnmatch.fnmatchcase(event_type(content) or "", self.at_event):
            return False
        self.fired = True
        return True


@dataclass
class WsPlan:
    """The base plan: passes everything. `timer_ms`: call on_timer() that long after the connection opened."""

    timer_ms: int | None = None

    def server_message(self, content: bytes) -> WsStep:
        return WsStep(content)

    def client_message(self, content: bytes) -> None:
        """A message the agent sent (it passes untouched; a plan may note it)."""

    def on_timer(self) -> WsStep:
        return WsStep(None)


@dataclass
class WsClose(WsPlan):
    trigger: Trigger = field(default_factory=Trigger)
    code: int = 1011
    reason: str = ""

    def server_message(self, content: bytes) -> WsStep:
        if not self.trigger.hits(content):
            return WsStep(content)
        return WsStep(None, close=(self.code, self.reason), effect=f"closed {self.code} {self.reason}".rstrip())


@dataclass
class WsInject(WsPlan):
    """Inject events ahead of the triggering message (which still arrives); the socket stays open."""

    trigger: Trigger = field(default_factory=Trigger)
    events: tuple[bytes, ...] = ()
    label: str = "error event"

    def server_message(self, content: bytes) -> WsStep:
        if not self.trigger.hits(content):
            return WsStep(content)
        return WsStep(content, before=self.events, effect=f"{self.label} injected")


@dataclass
class WsHold(WsPlan):
    """Hold matching server messages for delay_ms each (`once`: only the first one, a stall)."""

    trigger: Trigger = field(default_factory=Trigger)
    delay_ms: int = 1000
    once: bool = True

    def server_message(self, content: bytes) -> WsStep:
        if self.trigger.hits(content):
            if not self.once:
                self.trigger.fired = False
            return WsStep(content, delay_ms=self.delay_ms, effect=f"held {self.delay_ms} ms")
        return WsStep(content)


@dataclass
class WsDrop(WsPlan):
    """Drop matching server messages (at most `count`; None: every one)."""

    trigger: Trigger = field(default_factory=Trigger)
    count: int | None = None
    dropped: int = 0

    def server_message(self, content: bytes) -> WsStep:
        if (self.count is None or self.dropped < self.count) and self.trigger.hits(content):
            self.trigger.fired = False
            self.dropped += 1
            return WsStep(None, effect=f"dropped {self.dropped} message(s)")
        return WsStep(content)


@dataclass
class WsCorrupt(WsPlan):
    trigger: Trigger = field(default_factory=Trigger)

    def server_message(self, content: bytes) -> WsStep:
        if not self.trigger.hits(content):
            return WsStep(content)
        return WsStep(corrupt(content), effect="malformed JSON sent")


@dataclass
class WsCap(WsPlan):
    """Close the connection timer_ms after it opened: the provider's event first (if any), then the close."""

    events: tuple[bytes, ...] = ()
    code: int = 1000
    reason: str = ""

    def on_timer(self) -> WsStep:
        return WsStep(None, before=self.events, close=(self.code, self.reason), effect="connection cap event injected")


def _json(content: bytes) -> dict[str, Any]:
    try:
        data = json.loads(content)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


@dataclass
class WsRewrite(WsPlan):
    """A body rewrite (a context attack's on a tool's answer) applied to the server's messages, up to the first
    one it changes (an MCP result carried over a WebSocket, say)."""

    rewrite: Callable[[bytes], bytes] | None = None
    done: bool = False
    calls: set[Any] = field(default_factory=set)  # ids of the agent's JSON-RPC tools/call requests

    def client_message(self, content: bytes) -> None:
        message = _json(content)
        if message.get("method") == "tools/call" and "id" in message:
            self.calls.add(json.dumps(message["id"]))

    def server_message(self, content: bytes) -> WsStep:
        message = _json(content)
        rpc_answer = "jsonrpc" in message and "method" not in message
        if self.done or self.rewrite is None or (rpc_answer and json.dumps(message.get("id")) not in self.calls):
            return WsStep(content)  # over JSON-RPC, only a tools/call's result is a tool's answer
        out = self.rewrite(content)
        if same_content(content, out):
            return WsStep(content)
        self.done = True
        return WsStep(out, effect=f"message rewritten ({len(content)} -> {len(out)} bytes)")
