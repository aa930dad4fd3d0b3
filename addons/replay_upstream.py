"""The replay upstream: a small aiohttp server on loopback, on the proxy's own event loop, that answers a
request the Replayer pointed at it with the recorded exchange the Replayer registered for it.

Timing is the recording's, scaled by `speed` (0: no delays), counted from the moment the request reached
the proxy (the same monotonic clock): the status and headers at the recorded first byte, each SSE event at
its recorded time, a whole body at the recorded end. SSE events are written one by one, so their boundaries
are the recorded ones. A recorded exchange that had no response closes the connection.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass

from aiohttp import web
from aiohttp.http_websocket import WSMessage, WSMsgType  # not from the package: it has no client loaded

from flakeproxy.config.replays import Exchange

#: The header (internal: set by the Replayer, never seen upstream) that names the registered answer.
REPLAY_HEADER = "x-flakeproxy-replay"


@dataclass(frozen=True)
class Pending:
    exchange: Exchange
    speed: float
    started: float  # time.monotonic() when the request reached the proxy
    sent: float  # time.monotonic() when the proxy pointed it here


async def until(started: float, at_ms: float | None, speed: float) -> None:
    if at_ms is None or speed <= 0:
        return
    wait = started + at_ms * speed / 1000 - time.monotonic()
    if wait > 0:
        await asyncio.sleep(wait)


async def _close(request: web.Request) -> None:
    """Close the connection once what was written has gone out (no terminator, no rest of the body)."""
    transport = request.transport
    if transport is not None:
        await asyncio.sleep(0)  # let the writes above reach the socket buffer
        transport.close()


class ReplayUpstream:
    def __init__(self) -> None:
        self.pending: dict[str, Pending] = {}
        self._ids = itertools.count(1)
        self.port = 0
        self._runner: web.AppRunner | None = None

    def register(self, exchange: Exchange, speed: float, started: float) -> str:
        token = f"r{next(self._ids)}"
        self.pending[token] = Pending(exchange, speed, started, time.monotonic())
        return token

    async def start(self) -> None:
        app = web.Application(client_max_size=1024**3)
        app.router.add_route("*", "/{tail:.*}", self.serve)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None and server.sockets  # type: ignore[attr-defined]
        self.port = int(server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def serve(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        pending = self.pending.pop(request.headers.get(REPLAY_HEADER, ""), None)
        if pending is None:
            return web.json_response({"error": "flakeproxy replay: no recorded answer registered"}, status=502)
        x, speed = pending.exchange, pending.speed
        # what reaches the agent goes back through the proxy: one hop more than in the recording, which was
        # stamped where the proxy passed it on. That hop takes about as long as this request's way here did, so
        # every moment is moved earlier by it (the recorded gaps between events are kept as they were).
        started = pending.started - (time.monotonic() - pending.sent)
        if x.status is None:
            await until(started, x.latency_ms, speed)
            if request.transport is not None:
                request.transport.close()
            raise ConnectionResetError(x.error or "recorded without a response")
        if x.messages is not None:
            return await self._websocket(request, x, started, speed)
        headers = dict(x.response_headers)
        if x.events is None:  # (a body cut short is answered by the Replayer itself, as the proxy first sent it)
            await until(started, x.latency_ms, speed)
            return web.Response(status=x.status, body=x.response_body.encode(), headers=headers)
        response = web.StreamResponse(status=x.status, headers=headers)
        await until(started, x.first_byte_ms, speed)
        await response.prepare(request)
        for event in x.events:
            await until(started, event.at_ms, speed)
            await response.write(event.data.encode())
        if x.closed_mid_body:  # as recorded: these events, then the connection closes with no terminator
            await _close(request)
            raise ConnectionResetError("the recorded exchange closed mid-body")
        await response.write_eof()
        return response

    async def _websocket(self, request: web.Request, x: Exchange, started: float, speed: float) -> web.StreamResponse:
        """A recorded WebSocket: each server message at its recorded time, each of the agent's awaited in its
        place (at most CLIENT_WAIT_S), then the recorded close (or, when the agent closed it, the agent's)."""
        ws = web.WebSocketResponse()
        await until(started, x.first_byte_ms, speed)
        await ws.prepare(request)
        for message in x.messages or []:
            if message.sender == "client":
                got = await _receive(ws)
                if got is None:
                    return ws
                continue
            await until(started, message.at_ms, speed)
            if message.binary is not None:
                await ws.send_bytes(bytes.fromhex(message.binary))
            else:
                await ws.send_str(message.text or "")
        if x.closed_by_client:
            while await _receive(ws) is not None:
                pass  # the agent's further messages were not recorded (it closed): read them until it closes
        else:
            await ws.close(code=x.close_code or 1000, message=(x.close_reason or "").encode())
        return ws


#: How long a replayed WebSocket waits for a message the agent sent in the recording.
CLIENT_WAIT_S = 30.0


async def _receive(ws: web.WebSocketResponse) -> WSMessage | None:
    """The agent's next message, or None once it closed (or sent nothing for CLIENT_WAIT_S)."""
    try:
        message = await ws.receive(timeout=CLIENT_WAIT_S)
    except TimeoutError:
        return None
    return message if message.type in (WSMsgType.TEXT, WSMsgType.BINARY) else None
