"""One Action applied to one call, phase by phase: the one place that reads an Action's fields.

Each phase decides from the action what happens to its part of the call and notes on the call's Coverage what
that changed, so the proxy (across mitmproxy's hooks) and the python adapter (around a wrapped tool) do the same
thing for the same action and mean the same by "applied". The callers keep only what their transport needs:
sleeping, killing a flow or raising, making a response or returning a tool's result, framing a stream.
"""

from __future__ import annotations

from dataclasses import dataclass

from flakeproxy.wire.action import Action, BodyRewrite, Reply
from flakeproxy.wire.coverage import UPSTREAM, Coverage, WatchedStream
from flakeproxy.wire.stream_guard import watch_stream
from flakeproxy.wire.websocket import WsPlan, WsRewrite


@dataclass(frozen=True)
class Close:
    """The call ends with its connection closed and no answer (the upstream is not called)."""


CLOSE = Close()


@dataclass(frozen=True)
class NewAnswer:
    """A rewritten answer body. `length`: the Content-Length to keep (the original's), so the agent's read of a
    body that ends early fails on a connection closed there; `error`: how the journal says the connection ended
    (both None: the rewritten body is the whole answer)."""

    body: bytes
    length: int | None = None
    error: str | None = None


class Applying:
    """An Action being applied to one call, with the Coverage that records what it changed.

    The phases come in the call's order: delay_ms(), stop(), request(); then for the answer either unstreamed()
    and answer() (a body read whole) or streamed() (an event stream), or websocket() for an upgrade.
    """

    def __init__(self, action: Action, coverage: Coverage) -> None:
        self.action, self.coverage = action, coverage

    def delay_ms(self) -> int:
        """How long to wait before anything else (the caller sleeps its own way); noted as served from now, since
        the agent waits from now on even if it gives up before the end."""
        self.coverage.delayed(self.action.delay_ms)
        return self.action.delay_ms

    def gave_up(self, held_ms: float) -> None:
        """The agent closed its connection while the delay held it: held so long, and nothing after (no close or
        reply of the fault's, no upstream) reached it (a trial's effect said "delayed 8000 ms" of an agent that
        gave up after 5 s)."""
        self.coverage.changed("delay", f"held {held_ms:.0f} ms, until the agent gave up (of {self.action.delay_ms} ms)")

    @property
    def forwards(self) -> bool:
        """Whether the call still reaches the upstream (stop() is None)."""
        return self.action.forwards

    def stop(self) -> Close | Reply | None:
        """What ends the call instead of the upstream: CLOSE, the proxy's Reply, or None (it goes on)."""
        if self.action.close:
            self.coverage.closed()
            return CLOSE
        if self.action.reply is not None:
            self.coverage.replied(self.action.reply.status)
            return self.action.reply
        return None

    @property
    def rewrites_request(self) -> bool:
        """Whether request() needs the request body whole."""
        return self.action.rewrite_request is not None

    def request(self, body: bytes | None, why: str = "") -> bytes | None:
        """The request body to send instead of `body`, or None: send it as it is (the reason is noted). A body
        that could not be read whole is None, `why` says why."""
        return self._rewritten(self.action.rewrite_request, "request", body, why)

    def _rewritten(self, rewrite: BodyRewrite | None, part: str, body: bytes | None, why: str) -> bytes | None:
        """`body` rewritten, if the rewrite changed it (noted either way); None where there is no rewrite."""
        if rewrite is None:
            return None
        if body is None:
            self.coverage.unchanged(why)
            return None
        after = rewrite(body)
        return after if self.coverage.rewrote(part, body, after) else None

    @property
    def rewrites_answer(self) -> bool:
        """Whether answer() needs an answer that is not streamed whole."""
        return self.action.rewrite_body is not None

    def unstreamed(self) -> bool:
        """The answer is not an event stream. True: the action rewrites it whole, so it is read whole and given to
        answer(); a stream fault notes that it cannot apply."""
        if self.rewrites_answer:
            return True
        if self.action.stream is not None:
            self.coverage.not_streamed()
        return False

    def answer(self, body: bytes | None, why: str = "") -> NewAnswer | None:
        """The answer to give instead of `body`, or None: give it as it is (the reason is noted). A body that could
        not be read whole is None, `why` says why."""
        after = self._rewritten(self.action.rewrite_body, "response", body, why)
        if body is None or after is None:
            return None
        full, sent = len(body), len(after)
        length, error = None, None
        if self.action.keep_length:
            length, error = full, f"connection closed by fault mid-body after {sent} of {full} bytes"
        if self.action.reset_stream:
            error = f"connection cut by fault mid-body after {sent} of {full} bytes"
        return NewAnswer(after, length, error)

    def streamed(self, encoding: str | None) -> WatchedStream | None:
        """The answer is an event stream (`encoding`: its Content-Encoding): the watched transform to feed it
        through, or None: it passes as it comes (a whole-body rewrite, or a compressed stream the transform
        cannot re-encode, notes why)."""
        if self.action.stream is None:
            if self.rewrites_answer:
                self.coverage.streamed_whole()
            return None
        return watch_stream(self.action.stream(), self.coverage, encoding)

    @property
    def resets(self) -> bool:
        """Where the transform ends the stream, the agent's connection is cut there instead (no chunk terminator)."""
        return self.action.reset_stream

    def websocket(self) -> WsPlan | None:
        """The plan for a WebSocket connection's server messages: a WebSocket fault's, or a whole-answer rewrite
        applied to each server message (a context attack), or None: the messages pass."""
        if self.action.websocket is not None:
            return self.action.websocket()
        return WsRewrite(rewrite=self.action.rewrite_body) if self.action.rewrite_body is not None else None

    def upgrade_refused(self, status: int) -> None:
        """The upstream answered a WebSocket upgrade with `status`: a WebSocket fault had no messages to act on."""
        if self.action.websocket is not None:
            kind = self.coverage.kind
            self.coverage.unchanged(f"{UPSTREAM}refused the WebSocket upgrade ({status}); {kind} had no messages")
