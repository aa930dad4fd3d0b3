"""A fake OpenAI Realtime and Responses-over-WebSocket server on loopback (websockets): the APIs' real event
shapes, usage included.

Realtime (a path under /v1/realtime): on connect it sends session.created; session.update gets
session.updated; conversation.item.create gets conversation.item.added; response.create gets
response.created, response.output_item.added, one response.output_text.delta per word of ANSWER,
response.output_text.done and response.done with usage.
Responses (/v1/responses): each response.create gets the Responses stream's events, response.created to
response.completed with usage, numbered by sequence_number; a previous_response_id this connection did not
create gets the API's `previous_response_not_found` error event (the server keeps responses per connection,
so a reconnect loses them). It records each connection's path, headers and the events it received. A
deterministic fixture, not a mock.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from tests.support.loops import LoopThread, free_port

ANSWER = "AAPL trades at $189.50 on the exchange feed."
USAGE = {
    "total_tokens": 57,
    "input_tokens": 45,
    "output_tokens": 12,
    "input_token_details": {"cached_tokens": 0, "text_tokens": 45, "audio_tokens": 0},
    "output_token_details": {"text_tokens": 12, "audio_tokens": 0},
}


@dataclass
class Connection:
    path: str
    headers: dict[str, str]
    received: list[dict[str, Any]] = field(default_factory=list)
    close_code: int | None = None
    abandoned: bool = False  # closed while the server was still sending


@dataclass
class RealtimeServer:
    url: str = ""
    connections: list[Connection] = field(default_factory=list)
    #: the real failure the server itself produces on each connection (tests.fidelity.ws_failures), or None
    failure: Callable[[ServerConnection], Any] | None = None
    #: seconds between the events of an answer (a real token pace; 0: all at once)
    pace_s: float = 0.0
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def event(self, kind: str, **fields: Any) -> str:
        return json.dumps({"type": kind, "event_id": f"event_{next(self._ids)}", **fields})

    async def handle(self, ws: ServerConnection) -> None:
        request = ws.request
        assert request is not None
        conn = Connection(request.path, {k.lower(): v for k, v in request.headers.raw_items()})
        self.connections.append(conn)
        session = {"type": "realtime", "id": "sess_fp1", "object": "realtime.session", "model": "gpt-realtime"}
        realtime = request.path.startswith("/v1/realtime")
        if realtime:
            await ws.send(self.event("session.created", session=session))
        responses = Responses()
        failing = self.failure(ws) if self.failure is not None else None
        timer = asyncio.create_task(failing.timer()) if failing is not None else None
        try:
            async for raw in ws:
                message = json.loads(raw)
                conn.received.append(message)
                for i, out in enumerate(self.answer(message, session) if realtime else responses.answer(message)):
                    if i and self.pace_s:
                        await asyncio.sleep(self.pace_s)
                    if failing is None:
                        await ws.send(out)
                    elif not await failing.send(out):
                        break
        except ConnectionClosed as closed:  # the proxy closed it mid-answer (a fault): the test reads close_code
            conn.abandoned = closed.rcvd is not None
        finally:
            conn.close_code = ws.close_code
            if timer is not None:
                timer.cancel()

    def answer(self, message: dict[str, Any], session: dict[str, Any]) -> list[str]:
        kind = message.get("type")
        if kind == "session.update":
            return [self.event("session.updated", session={**session, **message.get("session", {})})]
        if kind == "conversation.item.create":
            item = {"id": "item_u1", "object": "realtime.item", "status": "completed", **message.get("item", {})}
            return [self.event("conversation.item.added", previous_item_id=None, item=item)]
        if kind == "response.create":
            return self.response()
        return []

    def response(self) -> list[str]:
        rid, iid = "resp_fp1", "item_fp1"
        base = {"response_id": rid, "item_id": iid, "output_index": 0, "content_index": 0}
        pending = {"id": rid, "object": "realtime.response", "status": "in_progress", "output": [], "usage": None}
        item = {"id": iid, "object": "realtime.item", "type": "message", "role": "assistant", "status": "in_progress"}
        words = [w if i == 0 else " " + w for i, w in enumerate(ANSWER.split(" "))]
        done_item = {**item, "status": "completed", "content": [{"type": "output_text", "text": ANSWER}]}
        return [
            self.event("response.created", response=pending),
            self.event("response.output_item.added", response_id=rid, output_index=0, item={**item, "content": []}),
            *[self.event("response.output_text.delta", **base, delta=w) for w in words],
            self.event("response.output_text.done", **base, text=ANSWER),
            self.event(
                "response.done", response={**pending, "status": "completed", "output": [done_item], "usage": USAGE}
            ),
        ]


@dataclass
class Responses:
    """One Responses-over-WebSocket connection: the responses it made (previous_response_id must name one)."""

    made: list[str] = field(default_factory=list)
    seq: Any = field(default_factory=lambda: itertools.count(0))

    def event(self, kind: str, **fields: Any) -> str:
        return json.dumps({"type": kind, "sequence_number": next(self.seq), **fields})

    def answer(self, message: dict[str, Any]) -> list[str]:
        if message.get("type") != "response.create":
            return []
        previous = message.get("previous_response_id")
        if previous is not None and previous not in self.made:
            text = f"Previous response with id '{previous}' not found."
            return [self.event("error", code="previous_response_not_found", message=text, param="previous_response_id")]
        rid = f"resp_ws{len(self.made) + 1}"
        self.made.append(rid)
        return self.stream(rid, str(message.get("model", "gpt-5")))

    def stream(self, rid: str, model: str) -> list[str]:
        at = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
        base = {"id": rid, "object": "response", "created_at": 1764000000, "model": model, "output": []}
        usage = {"input_tokens": 45, "output_tokens": 12, "total_tokens": 57}
        usage |= {"input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
        part = {"type": "output_text", "text": ANSWER, "annotations": []}
        item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": [part]}
        words = [w if i == 0 else " " + w for i, w in enumerate(ANSWER.split(" "))]
        return [
            self.event("response.created", response={**base, "status": "in_progress"}),
            *[self.event("response.output_text.delta", **at, delta=w, logprobs=[]) for w in words],
            self.event("response.output_text.done", **at, text=ANSWER, logprobs=[]),
            self.event(
                "response.completed", response={**base, "status": "completed", "output": [item], "usage": usage}
            ),
        ]


class RunningRealtime:
    """`with RunningRealtime() as server:` a fake Realtime server on a free loopback port in its own loop (over
    TLS with `tls`, a server context: then its url is https://127.0.0.1:PORT)."""

    def __init__(self, tls: ssl.SSLContext | None = None, pace_s: float = 0.0) -> None:
        self.tls, self.pace_s = tls, pace_s

    def __enter__(self) -> RealtimeServer:
        self.thread = LoopThread("realtime")
        self.server = RealtimeServer(pace_s=self.pace_s)
        port = free_port()
        self._ws: Server = self.thread.run(self._start(port))
        self.server.url = f"{'https' if self.tls else 'http'}://127.0.0.1:{port}"
        return self.server

    async def _start(self, port: int) -> Server:
        return await serve(self.server.handle, "127.0.0.1", port, ssl=self.tls)

    def __exit__(self, *exc: object) -> None:
        self._ws.close()
        self.thread.run(asyncio.wait_for(self._ws.wait_closed(), 5))
        self.thread.close()
