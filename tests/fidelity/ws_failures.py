"""Real WebSocket failures, produced by the fake Realtime server itself (tests.support.realtime's `failure`):
what a provider's socket does when it fails, written from the Realtime API's documented events, independently
of flakeproxy's wire code (flakeproxy.wire.websocket). One class per failure; each sees every event the server
is about to send (send() returns False to stop the answer) and may act on a timer from the connection's start."""

from __future__ import annotations

import asyncio
import json

from websockets.asyncio.server import ServerConnection


def kind(out: str) -> str:
    return str(json.loads(out)["type"])


class Failure:
    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws

    async def send(self, out: str) -> bool:
        await self.ws.send(out)
        return True

    async def timer(self) -> None:
        return None


class ClosesMidAnswer(Failure):
    """The server's socket fails mid-answer: a 1011 close where the first text delta would be."""

    async def send(self, out: str) -> bool:
        if kind(out) == "response.output_text.delta":
            await self.ws.close(1011, "upstream failed")
            return False
        return await super().send(out)


class ErrorEvent(Failure):
    """A server_error event before the response starts; the socket stays open and the response still comes."""

    async def send(self, out: str) -> bool:
        if kind(out) == "response.created":
            error = {"type": "server_error", "code": "server_error", "message": "boom", "param": None, "event_id": None}
            await self.ws.send(json.dumps({"type": "error", "event_id": "event_real1", "error": error}))
        return await super().send(out)


class RateLimited(Failure):
    """Limits exhausted: rate_limits.updated with nothing remaining, then the rate limit error event."""

    async def send(self, out: str) -> bool:
        if kind(out) == "response.created":
            limits = [
                {"name": "requests", "limit": 100, "remaining": 0, "reset_seconds": 2},
                {"name": "tokens", "limit": 40000, "remaining": 0, "reset_seconds": 2},
            ]
            await self.ws.send(json.dumps({"type": "rate_limits.updated", "event_id": "e1", "rate_limits": limits}))
            error = {"type": "rate_limit_error", "code": "rate_limit_exceeded", "message": "Rate limit reached."}
            error |= {"param": None, "event_id": None}
            await self.ws.send(json.dumps({"type": "error", "event_id": "e2", "error": error}))
        return await super().send(out)


class StallsBeforeDone(Failure):
    """The server goes quiet for 400 ms before response.done."""

    async def send(self, out: str) -> bool:
        if kind(out) == "response.done":
            await asyncio.sleep(0.4)
        return await super().send(out)


class SlowDeltas(Failure):
    """Every text delta comes 60 ms after the one before."""

    async def send(self, out: str) -> bool:
        if kind(out) == "response.output_text.delta":
            await asyncio.sleep(0.06)
        return await super().send(out)


class LosesDeltas(Failure):
    """The first two text deltas never arrive."""

    lost = 0

    async def send(self, out: str) -> bool:
        if kind(out) == "response.output_text.delta" and self.lost < 2:
            self.lost += 1
            return True
        return await super().send(out)


class MalformedEvent(Failure):
    """The first text delta is not valid JSON (a truncated frame); the rest come whole."""

    cut = False

    async def send(self, out: str) -> bool:
        if kind(out) == "response.output_text.delta" and not self.cut:
            self.cut = True
            await self.ws.send(out[: len(out) // 3])
            return True
        return await super().send(out)


class SessionExpires(Failure):
    """The session's time is up after 300 ms: session_expired, then a normal close."""

    async def timer(self) -> None:
        await asyncio.sleep(0.3)
        error = {"type": "invalid_request_error", "code": "session_expired", "message": "Your session expired."}
        error |= {"param": None, "event_id": None}
        await self.ws.send(json.dumps({"type": "error", "event_id": "e9", "error": error}))
        await self.ws.close(1000)
