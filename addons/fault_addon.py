"""The mitmproxy addon: ask the injector what to do with each request, apply that action, journal it.

It never decides anything itself: decisions come from flakeproxy.injector (pure code), and this
class only turns an Action into mitmproxy calls.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from mitmproxy import http

from flakeproxy.injector import CELL_HEADER, Decision, Injector
from flakeproxy.journal import BODY_CAP_BYTES, BodyCapture, Journal, JournalEntry, redact_headers
from flakeproxy.wire.call import resolve
from flakeproxy.wire.coverage import Coverage, WatchedStream

KEY = "flakeproxy"


@dataclass
class FlowState:
    entry: JournalEntry
    decision: Decision | None
    started: float
    capture: BodyCapture = field(default_factory=BodyCapture)
    coverage: Coverage | None = None  # what the decided fault changed, if one was decided
    transform: WatchedStream | None = None
    ended: bool = False  # the streamed body was ended early by the transform
    finished: bool = False  # the journal entry was written


def _is_sse(response: http.Response) -> bool:
    return response.headers.get("content-type", "").split(";")[0].strip().lower() == "text/event-stream"


class FaultAddon:
    def __init__(self, injector: Injector, listeners: dict[str, str], journal: Journal) -> None:
        self.injector = injector
        self.listeners = listeners  # mitmproxy mode spec -> listener name
        self.journal = journal

    def _listener(self, flow: http.HTTPFlow) -> str:
        return self.listeners.get(flow.client_conn.proxy_mode.full_spec, "forward")

    async def request(self, flow: http.HTTPFlow) -> None:
        started = time.monotonic()
        cell, candidates = self.injector.attribute(flow.request.headers.pop(CELL_HEADER, None))
        body = flow.request.get_content(strict=False) or b""
        headers = {k.lower(): v for k, v in flow.request.headers.items()}
        call = resolve(
            self.injector.targets,
            self._listener(flow),
            flow.request.method,
            flow.request.pretty_url,
            flow.request.path,
            headers,
            body,
        )
        decision = self.injector.decide(call, cell)
        entry = JournalEntry(
            seq=self.journal.next_seq(),
            cell=cell,
            cell_candidates=candidates,
            started_at=time.time(),
            listener=call.listener,
            targets=list(call.targets),
            method=call.method,
            url=call.url,
            request_headers=redact_headers(flow.request.headers.items(multi=True)),
            request_body=body[:BODY_CAP_BYTES].decode("utf-8", "replace"),
            request_bytes=len(body),
            fault=decision.record() if decision else None,
        )
        flow.metadata[KEY] = state = FlowState(entry, decision, started)
        entry.capture = state.capture
        if decision is not None:
            entry.coverage = state.coverage = Coverage(decision.kind)
        self.journal.add(entry)  # visible at once: a cell may end while its last stream is still open
        if decision is not None and state.coverage is not None:
            await self._apply(flow, decision, state.coverage)

    async def _apply(self, flow: http.HTTPFlow, decision: Decision, coverage: Coverage) -> None:
        action, entry = decision.action, flow.metadata[KEY].entry
        if action.delay_ms:
            await asyncio.sleep(action.delay_ms / 1000)
            coverage.delayed(action.delay_ms)
        if action.close:
            entry.upstream_called = False
            entry.error = "connection closed by fault"
            coverage.closed()
            flow.kill()
            self._finish(flow, flow.metadata[KEY])
        elif action.reply is not None:
            entry.upstream_called = False
            reply = action.reply
            flow.response = http.Response.make(reply.status, reply.body, reply.headers)
            if reply.reason:
                flow.response.reason = reply.reason
            coverage.replied(reply.status)
        elif action.rewrite_request is not None:
            before = flow.request.get_content(strict=False) or b""
            after = action.rewrite_request(before)
            if coverage.rewrote("request", before, after):
                flow.request.content = after

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        state: FlowState | None = flow.metadata.get(KEY)
        if state is None or flow.response is None:
            return
        state.entry.status = flow.response.status_code
        action = state.decision.action if state.decision else None
        coverage = state.coverage
        if not _is_sse(flow.response):
            if action is not None and coverage is not None and action.stream and action.rewrite_body is None:
                coverage.not_streamed()
            return
        if action is not None and coverage is not None and action.rewrite_body and action.stream is None:
            coverage.streamed_whole()
        if action is not None and coverage is not None and action.stream is not None:
            state.transform = WatchedStream(action.stream(), coverage)
            # The transform may end the body early: frame it as chunks, and do not reuse the connection.
            flow.response.headers.pop("content-length", None)
            flow.response.headers["transfer-encoding"] = "chunked"
            flow.response.headers["connection"] = "close"
        state.entry.streamed = True
        flow.response.stream = _Stream(state, flow.response)

    def response(self, flow: http.HTTPFlow) -> None:
        state: FlowState | None = flow.metadata.get(KEY)
        if state is None or flow.response is None:
            return
        action = state.decision.action if state.decision else None
        if not state.entry.streamed:
            body = flow.response.get_content(strict=False) or b""
            coverage = state.coverage
            if action is not None and action.rewrite_body is not None and coverage and state.entry.upstream_called:
                full, rewritten = len(body), action.rewrite_body(body)
                if coverage.rewrote("response", body, rewritten):
                    body = flow.response.content = rewritten
                    if action.keep_length:
                        flow.response.headers["content-length"] = str(full)
                        flow.response.headers["connection"] = "close"
            state.capture.add(body)
        self._finish(flow, state)

    def error(self, flow: http.HTTPFlow) -> None:
        state: FlowState | None = flow.metadata.get(KEY)
        if state is not None:
            state.entry.error = flow.error.msg if flow.error else "unknown error"
            if state.coverage is not None and flow.response is None:
                state.coverage.upstream_failed(state.entry.error)
            self._finish(flow, state)

    def _finish(self, flow: http.HTTPFlow, state: FlowState) -> None:
        if state.finished:
            return
        state.finished = True
        entry = state.entry
        entry.latency_ms = round((time.monotonic() - state.started) * 1000, 3)
        if flow.response is not None:
            entry.status = flow.response.status_code
            entry.response_headers = redact_headers(flow.response.headers.items(multi=True))
        if state.coverage is not None:
            state.coverage.finish()
        entry.complete = True  # the body fields are read from the capture when the entry is serialized
        self.journal.settle(entry)


class _Stream:
    """The stream callable mitmproxy calls per chunk (synchronously: it must never wait)."""

    def __init__(self, state: FlowState, response: http.Response) -> None:
        self.state = state
        self.response = response

    def __call__(self, data: bytes) -> bytes | list[bytes]:
        state = self.state
        transform, capture = state.transform, state.capture
        if transform is None:
            capture.add(data)
            return data
        # the watched transform sees every byte, even after the end, to tell whether it changed anything
        out = transform.finish() if data == b"" else transform.feed(data)
        if state.ended:
            return []
        capture.add(out)
        if data == b"":  # the upstream finished; b"" is not sent at this point
            return out
        if transform.done:
            state.ended = True
            return self._end_here(out)
        return out if out else []  # never b"" mid-stream: that would end the body

    def _end_here(self, out: bytes) -> bytes:
        """End the chunked body now, framed by hand: with the header gone, mitmproxy writes these bytes
        as they are and adds no second terminator when the upstream finishes later."""
        self.response.headers.pop("transfer-encoding", None)
        return (b"%x\r\n%s\r\n" % (len(out), out) if out else b"") + b"0\r\n\r\n"
