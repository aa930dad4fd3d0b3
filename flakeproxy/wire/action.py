"""What the proxy does to one request: the result of a fault's decision, applied by flakeproxy.wire.applying."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from flakeproxy.wire.websocket import WsPlan

REASONS = {429: "Too Many Requests", 529: "Site Overloaded", 504: "Gateway Timeout", 503: "Service Unavailable"}


@dataclass(frozen=True)
class Reply:
    """A response made by the proxy instead of the upstream's."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def reason(self) -> str | None:
        """Reason phrases mitmproxy lacks (429 on 11.0.2, 529 everywhere)."""
        return REASONS.get(self.status)


def json_reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps(payload).encode()
    return Reply(status, body, {"content-type": "application/json", **(headers or {})})


class StreamTransform(Protocol):
    """Rewrites a streamed body as it passes; a stream that is `done` gets no more bytes.

    events: how many events it has let through (or acted on); consumed: how many input bytes it
    turned into output (input never consumed was dropped); cut: it is done before the stream's own end
    (not at the provider's terminal event), so whatever the upstream sends next never reaches the agent.
    """

    done: bool
    cut: bool
    events: int
    consumed: int
    ended_by: str  # how a cut stream ended, as the journal's usage reason says it

    def feed(self, chunk: bytes) -> bytes: ...

    def finish(self) -> bytes: ...


BodyRewrite = Callable[[bytes], bytes]


@dataclass(frozen=True)
class Action:
    """Everything a fault can do to a call. Empty fields mean: leave that part alone.

    delay_ms: wait before anything else (latency, time to first token, a hang).
    close: after the delay, close the client connection without a response.
    reply: after the delay, answer instead of the upstream (the upstream is not called).
    rewrite_request: change the request body before it goes upstream.
    rewrite_body: change a buffered (non-streamed) response body.
    keep_length: with rewrite_body, keep the original Content-Length (a body cut short) and close.
    stream: make a transform for a text/event-stream response.
    websocket: make the plan for a WebSocket connection's server messages (flakeproxy.wire.websocket); the
      upgrade itself passes.
    reset_stream: with stream, when the transform ends the stream, close the agent's connection there with
      no chunk terminator (a connection cut mid-body, as a load balancer does), instead of ending cleanly.
    """

    delay_ms: int = 0
    close: bool = False
    reply: Reply | None = None
    rewrite_request: BodyRewrite | None = None
    rewrite_body: BodyRewrite | None = None
    keep_length: bool = False
    stream: Callable[[], StreamTransform] | None = None
    reset_stream: bool = False
    websocket: Callable[[], WsPlan] | None = None

    @property
    def forwards(self) -> bool:
        """Whether the request still reaches the upstream."""
        return not self.close and self.reply is None
