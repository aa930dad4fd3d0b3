"""What the addon keeps per flow, and the stream callables mitmproxy calls per body chunk.

mitmproxy calls a stream callable synchronously for each chunk (b"" once at the end of the body): it
must never wait, and it never holds the whole body.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mitmproxy import http

from flakeproxy.addons.upstream_timeouts import UpstreamWatch
from flakeproxy.proxycore.injector import Decision
from flakeproxy.proxycore.journal import BodyCapture, JournalEntry
from flakeproxy.wire.applying import Applying
from flakeproxy.wire.coverage import Coverage, WatchedStream
from flakeproxy.wire.markers import MarkerScan
from flakeproxy.wire.usage_meter import Ending, UsageMeter


@dataclass
class FlowState:
    entry: JournalEntry
    decision: Decision | None
    started: float
    capture: BodyCapture = field(default_factory=BodyCapture)
    coverage: Coverage | None = None  # what the decided fault changed, if one was decided
    applying: Applying | None = None  # the decided fault's action, applied hook by hook onto coverage
    transform: WatchedStream | None = None
    watch: UpstreamWatch | None = None
    meter: UsageMeter | None = None  # an LLM call's: reads the usage from the answer the agent gets
    usage_read: bool = False  # the entry's usage is final (read when a fault ended the stream early)
    streaming: bool = False  # the response body goes through as it comes (its headers are sent first)
    ended: bool = False  # the streamed body was ended early by the transform
    left_after_answer: bool = False  # the agent hung up once its whole answer had come (not an error)
    finished: bool = False  # the journal entry was written

    def elapsed_ms(self) -> float:
        """Since the request reached the proxy."""
        return round((time.monotonic() - self.started) * 1000, 3)


class Framed(bytes):
    """Bytes framed by hand as HTTP/1 chunks (mitmproxy writes them as they are); `payload` is what they carry,
    what the agent reads (the recorder keeps that)."""

    payload: bytes

    def __new__(cls, framed: bytes, payload: bytes) -> Framed:
        obj = super().__new__(cls, framed)
        obj.payload = payload
        return obj


class RequestPass:
    """A request body streamed upstream as it comes; the journal keeps its first bytes, and `scan` (an LLM
    request under a context attack) looks for the attacks' markers in all of it."""

    def __init__(self, encoding: str | None, scan: MarkerScan | None = None) -> None:
        self.capture = BodyCapture(encoding=encoding)
        self.scan = scan

    def __call__(self, data: bytes) -> bytes:
        self.capture.add(data)
        if self.scan is not None:
            self.scan.feed(data)
        return data


class ResponsePass:
    """A response body streamed to the agent as it comes: counted, its first bytes kept, the upstream
    read deadline moved on."""

    def __init__(self, state: FlowState, encoding: str | None) -> None:
        self.state = state
        state.capture.encoding = encoding

    def __call__(self, data: bytes) -> bytes:
        self.state.capture.add(data)
        if self.state.watch is not None:
            self.state.watch.activity()
        return data


class TransformedStream:
    """An SSE body fed through a fault's transform, chunk by chunk."""

    def __init__(
        self,
        state: FlowState,
        transform: WatchedStream,
        response: http.Response,
        cut: Callable[[], None] | None = None,
    ) -> None:
        self.state, self.transform, self.response = state, transform, response
        self.cut = cut  # set: where the transform ends the stream, cut the connection instead of ending it

    def __call__(self, data: bytes) -> bytes | list[bytes]:
        state, transform = self.state, self.transform
        if state.watch is not None:
            state.watch.activity()
        # the watched transform sees every byte, even after the end, to tell whether it changed anything
        out = transform.finish() if data == b"" else transform.feed(data)
        if state.ended:
            return []
        state.capture.add(out)
        if data == b"":  # the upstream finished; b"" is not sent at this point
            return out
        if transform.done:
            state.ended = state.entry.delivered = True  # the agent's stream ends here, whatever comes upstream
            state.entry.latency_ms = state.elapsed_ms()  # what the agent waited, not what the upstream took
            if state.meter is not None:  # what the agent got is all it gets: its usage is read now
                state.entry.usage, state.usage_read = state.meter.finish(self._ending()).to_json(), True
            if self.cut is not None and transform.cut:  # a stream that ended on its own is not reset after its end
                return self._cut_here(out)
            return self._end_here(out)
        return out if out else []  # never b"" mid-stream: that would end the body

    def _ending(self) -> Ending:
        """How the agent's stream ended: cut by the fault, or at the stream's own end (a transform that stops there,
        as truncated_response on an answer with no text to cut, changed nothing)."""
        if not self.transform.cut:
            return Ending(self.state.entry.status)
        return Ending(self.state.entry.status, cut=self.transform.ended_by, fault_end=True)

    def _cut_here(self, out: bytes) -> bytes | list[bytes]:
        """Send out as a last chunk framed by hand, then close the connection. With the header gone, mitmproxy
        writes no terminator even when the upstream's end arrives before the close (all at once, at pace 0)."""
        assert self.cut is not None
        events = self.transform.transform.events
        where = f"after {events} events, {self.state.capture.size} bytes of body"
        self.state.entry.error = f"connection cut by fault mid-stream {where}"
        self.state.entry.closed_mid_body = True
        self.transform.coverage.changed("reset", f"connection cut mid-stream {where}")
        self.response.headers.pop("transfer-encoding", None)
        self.cut()
        return Framed(b"%x\r\n%s\r\n" % (len(out), out), out) if out else []

    def _end_here(self, out: bytes) -> bytes:
        """End the chunked body now, framed by hand: with the header gone, mitmproxy writes these bytes
        as they are and adds no second terminator when the upstream finishes later."""
        self.response.headers.pop("transfer-encoding", None)
        return Framed((b"%x\r\n%s\r\n" % (len(out), out) if out else b"") + b"0\r\n\r\n", out)
