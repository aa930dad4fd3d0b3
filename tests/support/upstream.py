"""A real upstream on loopback that records what reaches it: a tool API and fake LLM providers.

The fake LLMs speak the providers' real JSON and SSE (OpenAI chat completions and responses,
Anthropic messages), usage included (tests.support.fake_usage): a deterministic test fixture, not a mock of
the proxy.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.failing import Script
from tests.support.fake_usage import (
    anthropic_usage,
    chat_usage,
    completion_tokens,
    include_usage,
    responses_usage,
)
from tests.support.loops import LoopThread, free_port

ANSWER = "AAPL trades at $189.50 according to the exchange feed, as the source says."
TOOL_ARGS = json.dumps({"symbol": "AAPL", "currency": "USD"})


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Upstream:
    url: str
    requests: list[Seen] = field(default_factory=list)

    def count(self, path: str | None = None) -> int:
        return sum(1 for r in self.requests if path is None or r.path == path)


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


def _words(text: str) -> list[str]:
    parts = text.split(" ")
    return [p if i == 0 else " " + p for i, p in enumerate(parts)]


def _wants_tool(body: dict[str, Any]) -> bool:
    return bool(body.get("tools"))


def openai_chat_events(body: dict[str, Any]) -> list[bytes]:
    """With stream_options.include_usage, every chunk says "usage": null and one more, with no choices, the usage."""
    base: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1}
    base |= {"model": body.get("model", "m")} | ({"usage": None} if include_usage(body) else {})
    events = [
        _sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})
    ]
    if _wants_tool(body):
        call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_quote", "arguments": ""}}
        events.append(_sse({**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}))
        for piece in (TOOL_ARGS[:10], TOOL_ARGS[10:]):
            delta = {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}
            events.append(_sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}))
        finish = "tool_calls"
    else:
        for word in _words(ANSWER):
            events.append(_sse({**base, "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}))
        finish = "stop"
    events.append(_sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    if include_usage(body):
        events.append(_sse({**base, "choices": [], "usage": chat_usage(body)}))
    events.append(_sse("[DONE]"))
    return events


def openai_chat_json(body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": ANSWER}
    finish = "stop"
    if _wants_tool(body):
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_quote", "arguments": TOOL_ARGS}}
            ],
        }
        finish = "tool_calls"
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": body.get("model", "m"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": chat_usage(body),
    }


def anthropic_json(body: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": ANSWER}]
    stop = "end_turn"
    if _wants_tool(body):
        content = [{"type": "tool_use", "id": "toolu_1", "name": "get_quote", "input": json.loads(TOOL_ARGS)}]
        stop = "tool_use"
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "m"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": anthropic_usage(body),
    }


def anthropic_events(body: dict[str, Any]) -> list[bytes]:
    message = {**anthropic_json(body), "content": [], "stop_reason": None, "usage": anthropic_usage(body, 1)}
    events = [_sse({"type": "message_start", "message": message}, "message_start")]
    if _wants_tool(body):
        block = {"type": "tool_use", "id": "toolu_1", "name": "get_quote", "input": {}}
        events.append(_sse({"type": "content_block_start", "index": 0, "content_block": block}, "content_block_start"))
        for piece in (TOOL_ARGS[:10], TOOL_ARGS[10:]):
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append(_sse({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"))
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        events.append(_sse({"type": "content_block_start", "index": 0, "content_block": block}, "content_block_start"))
        for word in _words(ANSWER):
            delta = {"type": "text_delta", "text": word}
            events.append(_sse({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"))
        stop = "end_turn"
    events.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
    events.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": completion_tokens(body)},
            },
            "message_delta",
        )
    )
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


def responses_json(body: dict[str, Any]) -> dict[str, Any]:
    output: list[dict[str, Any]] = [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
        }
    ]
    if _wants_tool(body):
        output = [
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "get_quote",
                "arguments": TOOL_ARGS,
                "status": "completed",
            }
        ]
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": body.get("model", "m"),
        "status": "completed",
        "output": output,
        "incomplete_details": None,
        "usage": responses_usage(body),
    }


def responses_events(body: dict[str, Any]) -> list[bytes]:
    done = responses_json(body)
    start = {**done, "status": "in_progress", "output": [], "usage": None}
    events = [_sse({"type": "response.created", "response": start, "sequence_number": 0}, "response.created")]
    n = 1
    if _wants_tool(body):
        item = {**done["output"][0], "arguments": "", "status": "in_progress"}
        events.append(
            _sse(
                {"type": "response.output_item.added", "output_index": 0, "item": item, "sequence_number": 1},
                "response.output_item.added",
            )
        )
        for n, piece in enumerate((TOOL_ARGS[:10], TOOL_ARGS[10:]), start=2):
            data = {
                "type": "response.function_call_arguments.delta",
                "item_id": "fc_1",
                "output_index": 0,
                "delta": piece,
                "sequence_number": n,
            }
            events.append(_sse(data, "response.function_call_arguments.delta"))
        events.append(
            _sse({"type": "response.completed", "response": done, "sequence_number": 4}, "response.completed")
        )
        return events
    opened = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}
    events.append(_sse({"type": "response.output_item.added", "output_index": 0, "item": opened,
                        "sequence_number": n}, "response.output_item.added"))  # fmt: skip
    blank = {"type": "output_text", "text": "", "annotations": []}
    added = {"item_id": "msg_1", "output_index": 0, "content_index": 0, "part": blank, "sequence_number": n + 1}
    events.append(_sse({"type": "response.content_part.added", **added}, "response.content_part.added"))
    n += 2
    for word in _words(ANSWER):
        data = {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": word,
            "sequence_number": n,
        }
        events.append(_sse(data, "response.output_text.delta"))
        n += 1
    # then, as the real API streams it, the part, the item and the response again whole (the SDKs build the answer
    # from these: the Agents SDK from response.completed)
    message, part = done["output"][0], done["output"][0]["content"][0]
    at = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    for kind, data in (
        ("response.output_text.done", {**at, "text": ANSWER}),
        ("response.content_part.done", {**at, "part": part}),
        ("response.output_item.done", {"output_index": 0, "item": message}),
        ("response.completed", {"response": done}),
    ):
        events.append(_sse({"type": kind, **data, "sequence_number": n}, kind))
        n += 1
    return events


class _App:
    def __init__(
        self, upstream: Upstream, event_gap_s: float, end_gap_s: float = 0.0, script: Script | None = None
    ) -> None:
        self.upstream, self.gap, self.end_gap, self.script = upstream, event_gap_s, end_gap_s, script

    @web.middleware
    async def record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        body = await request.read()
        self.upstream.requests.append(Seen(request.method, request.path, dict(request.headers), body, time.monotonic()))
        if self.script is not None and (failed := self.script(request)) is not None:
            return failed
        return await handler(request)

    async def stream(self, request: web.Request, events: list[bytes], gap: float | None = None) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "text/event-stream", "cache-control": "no-cache"})
        await response.prepare(request)
        for i, event in enumerate(events):
            if i and (gap if gap is not None else self.gap):
                await asyncio.sleep(gap if gap is not None else self.gap)
            await response.write(event)
        if self.end_gap:  # the last event is out; the body's end (the chunked terminator) comes later
            await asyncio.sleep(self.end_gap)
        await response.write_eof()
        return response

    async def quotes(self, request: web.Request) -> web.Response:
        symbol = request.query.get("symbol", "AAPL")
        return web.json_response({"symbol": symbol, "price": 189.5, "currency": "USD", "source": "exchange feed"})

    async def llm(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        kind = {"/v1/chat/completions": "chat", "/v1/messages": "anthropic", "/v1/responses": "responses"}
        shape = kind[request.path]
        if body.get("stream"):
            events = {"chat": openai_chat_events, "anthropic": anthropic_events, "responses": responses_events}
            return await self.stream(request, events[shape](body))
        makers = {"chat": openai_chat_json, "anthropic": anthropic_json, "responses": responses_json}
        return web.json_response(makers[shape](body))

    async def slow_sse(self, request: web.Request) -> web.StreamResponse:
        gap = float(request.query.get("gap", "0.2"))
        events = [_sse({"n": i, "sent_at": time.time()}) for i in range(int(request.query.get("n", "5")))]
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        for i in range(len(events)):
            if i:
                await asyncio.sleep(gap)
            await response.write(_sse({"n": i, "sent_at": time.time()}))
        await response.write_eof()
        return response

    async def echo(self, request: web.Request) -> web.Response:
        return web.json_response({"method": request.method, "body": (await request.read()).decode()})


async def _start(
    upstream: Upstream, port: int, gap: float, end_gap: float = 0.0, script: Script | None = None
) -> web.AppRunner:
    app_state = _App(upstream, gap, end_gap, script)
    app = web.Application(middlewares=[app_state.record])
    app.add_routes(
        [
            web.get("/v1/quotes", app_state.quotes),
            web.post("/v1/chat/completions", app_state.llm),
            web.post("/v1/messages", app_state.llm),
            web.post("/v1/responses", app_state.llm),
            web.get("/sse", app_state.slow_sse),
            web.post("/echo", app_state.echo),
            web.post("/api/messages", app_state.echo),
        ]
    )
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


class RunningUpstream:
    """Start with `with RunningUpstream() as up:`; up.url, up.requests, up.count(path). event_gap_s: the wait
    between two events of a stream; end_gap_s: between its last event and the end of its body; script: the
    status of each request in turn (tests.support.failing), its errors answered with a provider's error body."""

    def __init__(self, event_gap_s: float = 0.0, end_gap_s: float = 0.0, script: Script | None = None) -> None:
        self.gap, self.end_gap, self.script = event_gap_s, end_gap_s, script

    def __enter__(self) -> Upstream:
        self.thread = LoopThread("upstream")
        port = free_port()
        self.upstream = Upstream(f"http://127.0.0.1:{port}")
        self.runner = self.thread.run(_start(self.upstream, port, self.gap, self.end_gap, self.script))
        return self.upstream

    def __exit__(self, *exc: object) -> None:
        self.thread.run(self.runner.cleanup())
        self.thread.close()


#: The OpenAI chat and Anthropic messages targets of an `llm` listener, and the question the SDK tests ask.
SDK_TARGETS = {
    "chat": {"listener": "llm", "path": "/v1/chat/completions", "api": "openai"},
    "claude": {"listener": "llm", "path": "/v1/messages", "api": "anthropic"},
    "responses": {"listener": "llm", "path": "/v1/responses", "api": "openai-responses"},
}
QUESTION: list[dict[str, str]] = [{"role": "user", "content": "What is AAPL trading at?"}]
