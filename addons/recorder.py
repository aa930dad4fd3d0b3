"""Record whole exchanges per episode, for replay: the full bodies and, for SSE, each event's time.

Added after the FaultAddon, whose journal entry says which episode, listener and targets a request has; the
recorder wraps the stream function the FaultAddon set, so it sees what the agent received, chunk by chunk,
when. The journal's capture is capped at 64 KiB; a recording is not. While recording, request bodies are
buffered (not streamed) so that each is kept whole. Off unless `flakeproxy proxy --record DIR` or
`PUT /recording` turned it on; flakeproxy.replay, which builds and writes the sessions, is imported then (the
proxy starts without it, issue 23).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mitmproxy import http

from flakeproxy.addons.decoded import decoded
from flakeproxy.addons.fault_addon import KEY, REQUEST_PASS
from flakeproxy.addons.flow_state import Framed
from flakeproxy.config.replays import Exchange, Session
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.wire.record import fault_json

if TYPE_CHECKING:
    from flakeproxy.replay.build import RawExchange

TAKING = "flakeproxy.recording"
NO_EPISODE = "_"  # the recordings of requests that belong to no episode
WAIT_INFLIGHT_S = 5.0


def buffer_request(flow: http.HTTPFlow) -> None:
    """Read the request body whole before the request hook (undoing the FaultAddon's pass-through stream)."""
    if flow.metadata.pop(REQUEST_PASS, None) is not None or flow.request.stream:
        flow.request.stream = False


class TimedStream:
    """Wraps a response's stream function: passes its output on and keeps it with the time it went out."""

    def __init__(self, inner: Callable[[bytes], Any], raw: RawExchange, started: float) -> None:
        self.inner, self.raw, self.started = inner, raw, started

    def __call__(self, data: bytes) -> bytes:
        out = self.inner(data)
        chunk = out if isinstance(out, bytes) else b"".join(out)
        kept = chunk.payload if isinstance(chunk, Framed) else chunk  # what the agent reads, not the framing
        if kept:
            self.raw.chunks.append((kept, (time.monotonic() - self.started) * 1000))
        return chunk if chunk or not data else b""


class Recorder:
    def __init__(self, redactor: Redactor, folder: Path | None = None) -> None:
        self.redactor, self.folder = redactor, folder
        self._on = False
        self.on = folder is not None
        self.episodes: dict[str, list[Exchange]] = {}
        self.seen: dict[str, set[str]] = {}
        self.inflight: dict[str, int] = {}

    @property
    def on(self) -> bool:
        return self._on

    @on.setter
    def on(self, value: bool) -> None:
        if value:  # what builds and writes sessions: imported now, not in the first recorded request
            import flakeproxy.replay  # noqa: F401
        self._on = value

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if self.on:
            buffer_request(flow)

    def request(self, flow: http.HTTPFlow) -> None:
        state = flow.metadata.get(KEY)
        if not self.on or state is None:
            return
        from flakeproxy.replay.build import RawExchange  # imported when recording was turned on

        entry = state.entry
        episode = entry.episode or NO_EPISODE
        raw = RawExchange(
            listener=entry.listener,
            targets=list(entry.targets),
            method=entry.method,
            url=entry.url,
            request_headers=list(flow.request.headers.items(multi=True)),
            request_body=decoded(flow.request, "request")[0] or flow.request.raw_content or b"",  # bounded decode
        )
        flow.metadata[TAKING] = (episode, raw, state.started)
        self.inflight[episode] = self.inflight.get(episode, 0) + 1

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        taking = flow.metadata.get(TAKING)
        if taking is None or flow.response is None:
            return
        _, raw, started = taking
        raw.first_byte_ms = (time.monotonic() - started) * 1000
        if callable(flow.response.stream):
            flow.response.stream = TimedStream(flow.response.stream, raw, started)

    def response(self, flow: http.HTTPFlow) -> None:
        taking = flow.metadata.get(TAKING)
        if taking is None or flow.response is None:
            return
        _, raw, started = taking
        if flow.websocket is not None:  # recorded message by message, ended by websocket_end
            raw.messages = []
            return
        if not callable(flow.response.stream):  # buffered: a fault rewrote it, or it was made by the proxy
            raw.chunks = [(flow.response.raw_content or b"", (time.monotonic() - started) * 1000)]
        self._done(flow, None)

    def websocket_message(self, flow: http.HTTPFlow) -> None:
        """After the fault addons: a message the agent exchanged, as it went (dropped ones never did)."""
        taking = flow.metadata.get(TAKING)
        if taking is None or flow.websocket is None or taking[1].messages is None:
            return
        message = flow.websocket.messages[-1]
        if not message.dropped:
            at = (time.monotonic() - taking[2]) * 1000
            taking[1].messages.append((message.from_client, at, message.content, message.is_text))

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        taking = flow.metadata.get(TAKING)
        if taking is None or flow.websocket is None:
            return
        ws = flow.websocket
        taking[1].close = (ws.close_code, ws.close_reason, bool(ws.closed_by_client))
        self._done(flow, None)

    def error(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.get(TAKING) is not None:
            self._done(flow, flow.error.msg if flow.error else "unknown error")

    def _done(self, flow: http.HTTPFlow, error: str | None) -> None:
        from flakeproxy.replay.build import build_exchange, recorded_fault  # a flow taken while recording

        episode, raw, started = flow.metadata.pop(TAKING)
        raw.latency_ms = (time.monotonic() - started) * 1000
        raw.error = error
        if flow.response is not None:
            raw.status = flow.response.status_code
            raw.response_headers = list(flow.response.headers.items(multi=True))
        state = flow.metadata.get(KEY)
        if state is not None and state.entry.fault is not None:
            raw.fault = recorded_fault(fault_json(state.entry.fault, state.coverage))
        raw.closed_mid_body = state is not None and state.entry.closed_mid_body
        seen = self.seen.setdefault(episode, set())
        self.episodes.setdefault(episode, []).append(build_exchange(raw, self.redactor, seen))
        self.inflight[episode] -= 1

    async def take(self, episode: str) -> list[Exchange]:
        """An episode's exchanges (forgotten here), once its requests in flight have ended (or after 5 s)."""
        deadline = time.monotonic() + WAIT_INFLIGHT_S
        while self.inflight.get(episode, 0) > 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        self.seen.pop(episode, None)
        self.inflight.pop(episode, None)
        return self.episodes.pop(episode, [])

    async def episode_ended(self, episode: str, label: str | None) -> None:
        """`--record DIR`: write the episode's session file when its episode ends."""
        if self.folder is not None:
            exchanges = await self.take(episode)
            if exchanges:
                self.write(label or episode, exchanges)

    def write(self, name: str, exchanges: list[Exchange]) -> Path:
        assert self.folder is not None
        from flakeproxy.replay.files import write_session  # --record DIR turned recording on

        note = "recorded by flakeproxy proxy --record: the proxy does not see the prompt; fill in input"
        session = Session(id=name, input="", source="flakeproxy proxy --record", exchanges=exchanges, notes=[note])
        return write_session(self.folder, session)

    def done(self) -> None:
        """At shutdown, `--record DIR` writes what no ended episode took (requests of no episode, open episodes)."""
        if self.folder is None:
            return
        for episode, exchanges in list(self.episodes.items()):
            if exchanges:
                self.write("proxy" if episode == NO_EPISODE else episode, exchanges)
        self.episodes.clear()
