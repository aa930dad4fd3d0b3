"""The mitmproxy addon: ask the injector what to do with each request, apply that action, journal it.

It never decides anything itself: decisions come from flakeproxy.proxycore.injector (pure code), what an Action
does to each part of a call from flakeproxy.wire.applying, and this class only turns those into mitmproxy calls.
Bodies no fault needs whole are streamed both ways unless they are small and of a known length
(flakeproxy.addons.buffering): those are read whole, which costs mitmproxy less.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from mitmproxy import flow as mflow
from mitmproxy import http

from flakeproxy.addons import buffering
from flakeproxy.addons.client_cut import client_cutter
from flakeproxy.addons.decoded import REWRITE_CAP_TEXT, decoded
from flakeproxy.addons.flow_state import FlowState, RequestPass, ResponsePass, TransformedStream
from flakeproxy.addons.upstream_timeouts import Timeouts, UpstreamWatch
from flakeproxy.proxycore.injector import Clues, Injector
from flakeproxy.proxycore.journal import BODY_CAP_BYTES, Journal, JournalEntry, agent_left, redact_headers
from flakeproxy.wire.applying import Applying, Close
from flakeproxy.wire.call import CELL_HEADER, Call, folded, resolve
from flakeproxy.wire.coverage import Coverage
from flakeproxy.wire.markers import MarkerScan, carried
from flakeproxy.wire.mcp import trace_meta
from flakeproxy.wire.providers import provider
from flakeproxy.wire.sse import is_event_stream, media_type
from flakeproxy.wire.trace import baggage_episode, trace_id_of
from flakeproxy.wire.usage import unknown
from flakeproxy.wire.usage_meter import Ending, UsageMeter

KEY = "flakeproxy"
REQUEST_PASS = "flakeproxy.request"
ATTRIBUTION = "flakeproxy.episode"
NAMED = "flakeproxy.named"  # the episode a request named that was not open
#: An LLM call's usage while its answer is under way (the journal may be read before it ends)
UNFINISHED = unknown("the answer had not ended when the journal was read").to_json()
#: The largest request body read whole to find its episode in MCP `params._meta` when its headers name none.
META_BODY_MAX = 1 << 20


def _may_carry_meta(request: http.Request) -> bool:
    """A JSON POST of known, bounded length: it may be an MCP request with trace context in `params._meta`."""
    length = request.headers.get("content-length", "")
    json_body = media_type(request.headers.get("content-type", "")) == "application/json"
    return request.method == "POST" and json_body and length.isdigit() and int(length) <= META_BODY_MAX


def _is_sse(response: http.Response) -> bool:
    return is_event_stream(response.headers.get("content-type", ""))


class FaultAddon:
    def __init__(
        self,
        injector: Injector,
        listeners: dict[str, str],
        journal: Journal,
        timeouts: Mapping[str, Timeouts] | None = None,
        slots: Mapping[str, int] | None = None,
    ) -> None:
        self.injector = injector
        self.listeners = listeners  # mitmproxy mode spec -> listener name
        self.journal = journal
        self.timeouts = dict(timeouts or {})  # listener name -> its upstream timeouts
        self.slots = dict(slots or {})  # mitmproxy mode spec -> the slot its listener serves

    def _slot(self, flow: http.HTTPFlow) -> int | None:
        return self.slots.get(flow.client_conn.proxy_mode.full_spec)

    def _attribute(self, flow: http.HTTPFlow) -> tuple[str | None, list[str]]:
        """The request's episode, decided once, when its headers arrive (the episode header is removed then)."""
        if ATTRIBUTION not in flow.metadata:
            headers = flow.request.headers
            clues = Clues(
                header=headers.pop(CELL_HEADER, None),
                trace_id=trace_id_of(headers.get("traceparent", "")),
                baggage_episode=baggage_episode(", ".join(headers.get_all("baggage"))),
                slot=self._slot(flow),
            )
            flow.metadata[ATTRIBUTION] = self.injector.attribute(clues)
            if flow.metadata[ATTRIBUTION][0] is None and (gone := self.injector.named_gone(clues)) is not None:
                flow.metadata[NAMED] = gone[:128]
        attributed: tuple[str | None, list[str]] = flow.metadata[ATTRIBUTION]
        return attributed

    def _attribute_by_meta(self, flow: http.HTTPFlow, body: bytes) -> tuple[str | None, list[str]]:
        """A request whose headers named no episode among several open ones, tied by the trace context its MCP
        message carries in `params._meta` (an MCP client propagates it there, not in HTTP headers)."""
        meta = trace_meta(body)
        if meta:
            trace_id = trace_id_of(meta.get("traceparent", ""))
            clues = Clues(trace_id=trace_id, baggage_episode=baggage_episode(meta.get("baggage", "")))
            flow.metadata[ATTRIBUTION] = self.injector.attribute(clues)
        return self._attribute(flow)

    def _listener(self, flow: http.HTTPFlow) -> str:
        return self.listeners.get(flow.client_conn.proxy_mode.full_spec, "forward")

    def _call(self, flow: http.HTTPFlow, body: bytes) -> Call:
        headers = folded(flow.request.headers.items(multi=True))
        request = flow.request
        return resolve(
            self.injector.targets, self._listener(flow), request.method, request.pretty_url, request.path, headers, body
        )

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """Stream the request body upstream unless a fault of the request's scenario could need it, or it is small."""
        episode, candidates = self._attribute(flow)
        if episode is None and candidates and _may_carry_meta(flow.request):
            return  # read whole: its body may name the episode (MCP params._meta)
        if buffering.buffers(flow.request):
            return
        call = self._call(flow, b"")
        if flow.response is None and not self.injector.may_fault(call, episode):  # None: not refused
            encoding = flow.request.headers.get("content-encoding")
            markers = self.injector.markers(call, episode)
            scan = MarkerScan(markers) if markers else None
            flow.request.stream = flow.metadata[REQUEST_PASS] = RequestPass(encoding, scan)

    async def request(self, flow: http.HTTPFlow) -> None:
        started = time.monotonic()
        episode, candidates = self._attribute(flow)
        passed: RequestPass | None = flow.metadata.get(REQUEST_PASS)
        body = b"" if flow.request.stream else decoded(flow.request, "request")[0] or b""
        if episode is None and candidates and body:
            episode, candidates = self._attribute_by_meta(flow, body)
        call = self._call(flow, body)
        decision = None if flow.response is not None else self.injector.decide(call, episode)  # refused already
        kept = passed.capture.text() if passed else body[:BODY_CAP_BYTES].decode("utf-8", "replace")
        entry = JournalEntry(
            seq=self.journal.next_seq(),
            episode=episode,
            episode_candidates=candidates,
            started_at=time.time(),
            listener=call.listener,
            slot=self._slot(flow),
            turn=self.injector.turn_of(episode),
            named_episode=flow.metadata.get(NAMED),
            targets=list(call.targets),
            method=call.method,
            url=call.url,
            request_headers=redact_headers(flow.request.headers.items(multi=True)),
            request_body=kept,
            request_bytes=passed.capture.size if passed else len(body),
            fault=decision.record() if decision else None,
            carries_attacks=self._carries(call, episode, passed, body),
        )
        flow.metadata[KEY] = state = FlowState(entry, decision, started)
        entry.capture = state.capture
        if call.api is not None and call.method == "POST":  # an LLM call (a GET lists models, say)
            state.meter = UsageMeter(call.api, body)  # type: ignore[arg-type]  # the config's api: is one of usage.Api
            state.capture.tap = state.meter.feed
            entry.usage = dict(UNFINISHED)  # an LLM call from the start: its usage is known once its answer ends
        if decision is not None:
            entry.coverage = state.coverage = Coverage(decision.kind)
            state.applying = Applying(decision.action, state.coverage)
        self.journal.add(entry)  # visible at once: an episode may end while its last stream is still open
        if state.applying is not None:
            await self._apply(flow, state.applying)
        if flow.response is None and flow.error is None:
            timeouts = self.timeouts.get(call.listener, Timeouts())
            message = f"upstream sent no response within {timeouts.read_ms} ms"
            state.watch = UpstreamWatch(flow, timeouts, lambda: provider(call.api).error(504, message))

    def _carries(self, call: Call, episode: str | None, passed: RequestPass | None, body: bytes) -> list[int]:
        """Which context attacks of the episode's scenario this LLM request carries the payload of (the model gets
        what the agent passed on from a poisoned tool answer)."""
        if passed is not None:
            return sorted(passed.scan.found) if passed.scan is not None else []
        markers = self.injector.markers(call, episode)
        return carried(markers, body) if markers else []

    def _end_here(self, flow: http.HTTPFlow, why: str) -> None:
        """The call ends at the proxy, the upstream never called: the connection closed, the entry saying why."""
        state = flow.metadata[KEY]
        state.entry.upstream_called, state.entry.error = False, why
        flow.kill()
        self.finish(flow, state)

    async def _apply(self, flow: http.HTTPFlow, applying: Applying) -> None:
        """The request's part of the action: wait, then end the call here (closed, or the proxy's reply) or send
        the request on, rewritten if the action says so."""
        entry = flow.metadata[KEY].entry
        if delay_ms := applying.delay_ms():
            began = time.time()
            await asyncio.sleep(delay_ms / 1000)
            gone = flow.client_conn.timestamp_end
            if gone is not None and (held_ms := (gone - began) * 1000) < delay_ms:  # the agent gave up first
                applying.gave_up(held_ms)
                self._end_here(flow, f"the agent gave up after {held_ms:.0f} ms of the fault's {delay_ms} ms hold")
                return
        stop = applying.stop()
        if isinstance(stop, Close):
            self._end_here(flow, "connection closed by fault")
        elif stop is not None:
            entry.upstream_called = False
            flow.response = http.Response.make(stop.status, stop.body, stop.headers)
            if stop.reason:
                flow.response.reason = stop.reason
        elif applying.rewrites_request:
            too_large = f"the request was larger than {REWRITE_CAP_TEXT}, the most a rewrite buffers"
            before, why = (None, too_large) if flow.request.stream else decoded(flow.request, "request")
            if (after := applying.request(before, why or "")) is not None:
                flow.request.content = after

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        state: FlowState | None = flow.metadata.get(KEY)
        if state is None or flow.response is None:
            return
        state.entry.status = flow.response.status_code
        if not state.entry.upstream_called:
            return  # a reply the proxy made: its body is in hand, and the journal keeps it (response())
        if state.coverage is not None:
            state.coverage.answered(flow.response.status_code)
        if state.meter is not None:
            state.meter.sse = _is_sse(flow.response)
        if state.watch is not None:
            state.watch.headers()
        if flow.response.status_code == 101:
            return  # a WebSocket (or other) upgrade: no body; flakeproxy.addons.websocket takes it from here
        applying = None if self._timed_out(state) else state.applying
        encoding = flow.response.headers.get("content-encoding")
        if not _is_sse(flow.response):
            if applying is not None and applying.unstreamed():
                return  # buffered for the rewrite (mitmproxy streams it past REWRITE_CAP)
            if not buffering.buffers(flow.response):  # else read whole: response() journals it
                self._stream(flow, state, ResponsePass(state, encoding))
            return
        transform = applying.streamed(encoding) if applying is not None else None  # bounded; gzip/br re-encoded
        if applying is None or transform is None:  # passes as it comes (why a fault could not apply is noted)
            self._stream(flow, state, ResponsePass(state, encoding))
            return
        state.transform, state.capture.encoding = transform, encoding
        # The transform may end the body early: frame it as chunks. No `connection: close` (a provider's
        # stream has none): the agent may reuse the connection once the body has ended.
        flow.response.headers.pop("content-length", None)
        flow.response.headers["transfer-encoding"] = "chunked"
        cut = client_cutter(flow) if applying.resets else None
        self._stream(flow, state, TransformedStream(state, transform, flow.response, cut))

    def _stream(self, flow: http.HTTPFlow, state: FlowState, fn: ResponsePass | TransformedStream) -> None:
        assert flow.response is not None
        state.streaming = state.entry.streamed = True
        flow.response.stream = fn
        # the headers as the agent gets them, journaled now: a stream the fault ends may be read (its episode
        # over) before the upstream has finished
        state.entry.response_headers = redact_headers(flow.response.headers.items(multi=True))

    def response(self, flow: http.HTTPFlow) -> None:
        state: FlowState | None = flow.metadata.get(KEY)
        if state is None or flow.response is None:
            return
        if flow.websocket is not None:  # the entry ends with the connection (flakeproxy.addons.websocket)
            state.entry.response_headers = redact_headers(flow.response.headers.items(multi=True))
            return
        applying, coverage = state.applying, state.coverage
        if self._timed_out(state) and coverage is not None and state.watch is not None:
            coverage.upstream_failed(state.watch.expired or "")
        elif flow.response.stream and not state.streaming:  # mitmproxy streamed it: past REWRITE_CAP
            state.entry.streamed = True
            if applying is not None:
                applying.answer(None, f"the answer was larger than {REWRITE_CAP_TEXT}, the most a rewrite buffers")
        elif not state.streaming and state.entry.upstream_called and not (applying and applying.rewrites_answer):
            ResponsePass(state, flow.response.headers.get("content-encoding"))(flow.response.raw_content or b"")
        elif not state.streaming:
            self._read_whole(flow.response, state)
        self.finish(flow, state)
        if state.ended and state.transform is not None and not state.transform.coverage.effects.get("reset"):
            # The body was ended early by hand and the upstream has now finished: a zero length (set after the
            # journal took the headers) tells mitmproxy this response was framed, not read-until-close, so the
            # agent's connection stays open for its next request, as after a provider's stream (no
            # `connection: close`, no second terminator).
            flow.response.headers["content-length"] = "0"

    @staticmethod
    def _read_whole(response: http.Response, state: FlowState) -> None:
        """An answer read whole: given to the action's rewrite (the upstream's, not a reply the proxy made), and
        journaled as the agent gets it."""
        body, why = decoded(response, "answer")
        if body is None:  # past the decoded limit, or undecodable: it passes unchanged
            state.capture.encoding, body = response.headers.get("content-encoding"), response.raw_content
            if state.applying is not None:
                state.applying.answer(None, why or "")
        elif state.applying is not None and state.entry.upstream_called:
            new = state.applying.answer(body)
            if new is not None:
                body = response.content = new.body
                if new.length is not None:  # cut short: the agent's read ends early on a closed connection
                    response.headers["content-length"] = str(new.length)
                    response.headers["connection"] = "close"
                    state.entry.closed_mid_body = True
                state.entry.error = new.error or state.entry.error
        state.capture.add(body or b"")

    def error(self, flow: http.HTTPFlow) -> None:
        state: FlowState | None = flow.metadata.get(KEY)
        if state is None:
            return
        entry = state.entry
        message = flow.error.msg if flow.error else "unknown error"
        if state.watch is not None and state.watch.expired:
            message = state.watch.expired
        if agent_left(message) and self._answered_whole(flow, state):
            self._left_after_answer(flow, state)
            return
        entry.error = entry.error or message
        if flow.response is not None and state.streaming and not state.ended and not agent_left(message):
            entry.closed_mid_body = True  # the agent had its status and part of the body when the upstream broke
        if state.coverage is not None and (flow.response is None or not state.streaming or self._timed_out(state)):
            state.coverage.upstream_failed(message)  # the agent got mitmproxy's 502, not the fault's change
        self.finish(flow, state, self._client_status(flow, state))

    @staticmethod
    def _answered_whole(flow: http.HTTPFlow, state: FlowState) -> bool:
        """Whether the agent had all of its answer: the exchange had ended, the proxy ended the body itself, every
        byte of a body of known length passed, or an LLM stream's own end ([DONE], message_stop, ...) did."""
        if state.finished or state.ended:
            return True
        if flow.response is None or not state.streaming:
            return False
        length = flow.response.headers.get("content-length", "")
        if length.isdigit() and state.capture.size >= int(length):
            return True
        return state.meter is not None and state.meter.complete

    def _left_after_answer(self, flow: http.HTTPFlow, state: FlowState) -> None:
        """The agent hung up after its whole answer, before the upstream's end of body (openai-python closes at
        [DONE], while the chunked terminator may still be on its way): the exchange ended as if that end had come
        first, with no error, and a stream fault's transform ends as it does at the end of the body."""
        if state.finished:
            return
        state.left_after_answer = True
        if state.transform is not None:
            state.transform.finish()
        self.finish(flow, state, self._client_status(flow, state))

    @staticmethod
    def _client_status(flow: http.HTTPFlow, state: FlowState) -> int | None:
        """What the agent got when the flow failed: mitmproxy answers 502 unless the answer had begun
        (then the agent saw its status and a broken body), the flow was killed, or the agent left."""
        message = flow.error.msg if flow.error else ""
        if message == mflow.Error.KILLED_MESSAGE or agent_left(message):
            return None if flow.response is None or not state.streaming else flow.response.status_code
        if flow.response is not None and state.streaming:
            return flow.response.status_code
        return 502

    @staticmethod
    def _timed_out(state: FlowState) -> bool:
        return state.watch is not None and state.watch.expired is not None

    @staticmethod
    def _ending(flow: http.HTTPFlow, state: FlowState) -> Ending:
        """How an LLM call ended, for its usage: no answer or a cut one is unknown (flakeproxy.wire.usage_meter)."""
        entry = state.entry
        if not entry.upstream_called:
            return Ending(entry.status, proxy_made=True)
        if flow.response is None:
            return Ending(None, cut=entry.error)
        broke = flow.error is not None and not state.left_after_answer
        cut = entry.closed_mid_body or broke or bool(entry.error)
        return Ending(entry.status, cut=(entry.error or "the connection broke mid-body") if cut else None)

    def finish(self, flow: http.HTTPFlow, state: FlowState, status: int | None = None) -> None:
        if state.finished:
            return
        state.finished = True
        if state.watch is not None:
            state.watch.stop()
        entry = state.entry
        entry.delivered = True
        if entry.latency_ms is None:  # else the fault ended the agent's stream then (TransformedStream)
            entry.latency_ms = state.elapsed_ms()
        if flow.response is not None and not state.streaming:  # a streamed answer's were journaled as it began
            entry.response_headers = redact_headers(flow.response.headers.items(multi=True))
        entry.status = status if flow.error is not None else (flow.response.status_code if flow.response else None)
        if state.watch is not None and state.watch.expired:
            entry.error = state.watch.expired
        if state.coverage is not None:
            state.coverage.finish()
        if state.meter is not None and not state.usage_read:  # else read when the fault ended the stream
            entry.usage = state.meter.finish(self._ending(flow, state)).to_json()
        entry.complete = True  # the body fields are read from the capture when the entry is serialized
        self.journal.settle(entry)
