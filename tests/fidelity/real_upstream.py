"""An upstream that fails the way the providers do, written from their documentation and observed replies,
independently of flakeproxy's wire code. With no failure planned it answers normally (the fake LLM of
tests/support/upstream.py), so the same server is the upstream behind the proxy too.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fidelity.gemini_upstream import gemini_events, gemini_json
from tests.support.loops import LoopThread, free_port
from tests.support.upstream import (
    ANSWER,
    TOOL_ARGS,
    anthropic_events,
    anthropic_json,
    openai_chat_events,
    openai_chat_json,
    responses_events,
    responses_json,
)


@dataclass(frozen=True)
class Real:
    """A real failure. kind: status (an error reply `times` times, then normal answers), cut (a stream that
    ends cleanly after `after` events), reset (the connection dropped after `after` events, or `after_bytes`
    of a JSON body, no terminator), stream_error (an error event after `after` events), truncate (a max-tokens
    answer of `after` words), tool_prefix (a streamed tool call whose arguments stop after `after` chars),
    hang (no answer for `seconds`)."""

    kind: str
    status: int = 0
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 99
    after: int = 3
    after_bytes: int | None = None
    event: bytes = b""
    seconds: float = 0.0


@dataclass
class Seen:
    path: str
    at: float
    headers: dict[str, str] = field(default_factory=dict)  # what the reply sent (lower-case names)


@dataclass
class RealUpstream:
    url: str
    plan: Real | None = None
    seen: list[Seen] = field(default_factory=list)


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


def _shape(path: str) -> str:
    if "/models/" in path:
        return "gemini"
    return {"/v1/chat/completions": "chat", "/v1/messages": "anthropic", "/v1/responses": "responses"}[path]


def _words(n: int) -> str:
    return " ".join(ANSWER.split(" ")[:n])


def truncated_events(shape: str, body: dict[str, Any], n: int) -> list[bytes]:
    """A stream stopped by the token limit after n words, as each provider ends one."""
    if shape == "chat":
        events = openai_chat_events(body)[: 1 + n]
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": body.get("model", "m")}
        return [
            *events,
            sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
            sse("[DONE]"),
        ]
    events = anthropic_events(body)[: 2 + n]
    delta = {"type": "message_delta", "delta": {"stop_reason": "max_tokens", "stop_sequence": None}}
    return [
        *events,
        sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
        sse({**delta, "usage": {"output_tokens": n}}, "message_delta"),
        sse({"type": "message_stop"}, "message_stop"),
    ]


def truncated_json(shape: str, body: dict[str, Any], n: int) -> dict[str, Any]:
    if shape == "chat":
        answer = openai_chat_json(body)
        answer["choices"][0]["message"]["content"] = _words(n)
        answer["choices"][0]["finish_reason"] = "length"
        return answer
    answer = anthropic_json(body)
    answer["content"][0]["text"] = _words(n)
    answer["stop_reason"] = "max_tokens"
    return answer


def tool_prefix_events(shape: str, body: dict[str, Any], chars: int) -> list[bytes]:
    """A streamed tool call whose arguments stop after chars characters (the rest never generated)."""
    prefix = TOOL_ARGS[:chars]
    if shape == "chat":
        events = openai_chat_events(body)
        head, tail = events[:2], events[-2:]  # role + call header; finish + [DONE]
        delta = {"tool_calls": [{"index": 0, "function": {"arguments": prefix}}]}
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": body.get("model", "m")}
        return [*head, sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}), *tail]
    events = anthropic_events(body)
    piece = {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": prefix}}
    return [*events[:2], sse(piece, "content_block_delta"), *events[-3:]]


class _App:
    def __init__(self, upstream: RealUpstream, event_gap_s: float = 0.0) -> None:
        self.up, self.gap = upstream, event_gap_s  # gap: a real token pace between streamed events

    def normal(self, shape: str, body: dict[str, Any], streaming: bool) -> tuple[list[bytes] | None, Any]:
        if shape == "gemini":
            return (gemini_events(body=body), None) if streaming else (None, gemini_json(body=body))
        if streaming:
            return {"chat": openai_chat_events, "anthropic": anthropic_events, "responses": responses_events}[shape](
                body
            ), None
        return None, {"chat": openai_chat_json, "anthropic": anthropic_json, "responses": responses_json}[shape](body)

    async def llm(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.up.seen.append(Seen(request.path, time.monotonic()))
        shape, plan = _shape(request.path), self.up.plan
        streaming = bool(body.get("stream")) or request.path.endswith(":streamGenerateContent")
        events, answer = self.normal(shape, body, streaming)
        if plan is not None and plan.kind == "status" and len(self.up.seen) <= plan.times:
            self.up.seen[-1].headers = {k.lower(): v for k, v in plan.headers.items()}
            return web.Response(
                status=plan.status,
                body=json.dumps(plan.body).encode(),
                content_type="application/json",
                headers=plan.headers,
            )
        if plan is not None and plan.kind == "hang":
            await asyncio.sleep(plan.seconds)
        if plan is not None and plan.kind == "truncate" and shape == "gemini":
            after = plan.after
            events, answer = (gemini_events(after, body), None) if streaming else (None, gemini_json(after, body))
        elif plan is not None and plan.kind == "truncate":
            if streaming:
                events = truncated_events(shape, body, plan.after)
            else:
                answer = truncated_json(shape, body, plan.after)
        if plan is not None and plan.kind == "tool_prefix":
            events = tool_prefix_events(shape, body, plan.after)
        if plan is not None and plan.kind == "reset" and events is None:
            return await self.reset_json(request, answer, plan.after_bytes or 40)
        if events is None:
            return web.json_response(answer)
        return await self.stream(request, events, plan)

    async def stream(self, request: web.Request, events: list[bytes], plan: Real | None) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "text/event-stream", "cache-control": "no-cache"})
        await response.prepare(request)
        kind = plan.kind if plan is not None else ""
        for i, event in enumerate(events):
            if kind in ("cut", "reset", "stream_error") and i == plan.after:  # type: ignore[union-attr]
                if kind == "stream_error":
                    await response.write(plan.event)  # type: ignore[union-attr]
                    break
                if kind == "reset":
                    assert request.transport is not None
                    request.transport.close()  # FIN after what was written: no chunk terminator
                    return response
                break
            if i and self.gap:
                await asyncio.sleep(self.gap)
            await response.write(event)
        await response.write_eof()
        return response

    async def reset_json(self, request: web.Request, answer: Any, after: int) -> web.StreamResponse:
        data = json.dumps(answer).encode()
        response = web.StreamResponse(headers={"content-type": "application/json", "content-length": str(len(data))})
        await response.prepare(request)
        await response.write(data[:after])
        assert request.transport is not None
        request.transport.close()
        return response


async def _start(upstream: RealUpstream, port: int, event_gap_s: float = 0.0) -> web.AppRunner:
    app_state = _App(upstream, event_gap_s)
    app = web.Application()
    paths = ("/v1/chat/completions", "/v1/messages", "/v1/responses", "/{version}/models/{name}")
    app.add_routes([web.post(p, app_state.llm) for p in paths])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


class RunningRealUpstream:
    def __init__(self, event_gap_s: float = 0.0) -> None:
        self.gap = event_gap_s

    def __enter__(self) -> RealUpstream:
        self.thread = LoopThread("real-upstream")
        port = free_port()
        self.upstream = RealUpstream(f"http://127.0.0.1:{port}")
        self.runner = self.thread.run(_start(self.upstream, port, self.gap))
        return self.upstream

    def __exit__(self, *exc: object) -> None:
        self.thread.run(self.runner.cleanup())
        self.thread.close()
