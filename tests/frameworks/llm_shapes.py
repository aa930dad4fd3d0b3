"""A gullible.Turn in the providers' real wire shapes: OpenAI chat completions (JSON, SSE chunks ending in
`[DONE]`) and Anthropic messages (JSON, SSE events from message_start to message_stop)."""

from __future__ import annotations

import json
from typing import Any

from tests.frameworks.gullible import Turn, words

MODEL = "fake-model"


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


def _usage_openai() -> dict[str, int]:
    return {"prompt_tokens": 20, "completion_tokens": 12, "total_tokens": 32}


def openai_json(turn: Turn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool_call is not None:
        call = turn.tool_call
        function = {"name": call.name, "arguments": json.dumps(call.arguments)}
        message["tool_calls"] = [{"id": "call_1", "type": "function", "function": function}]
    finish = "tool_calls" if turn.tool_call else "stop"
    choice = {"index": 0, "message": message, "finish_reason": finish}
    reply = {"id": "chatcmpl-fw", "object": "chat.completion", "created": 1, "model": MODEL, "choices": [choice]}
    return {**reply, "usage": _usage_openai()}


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return sse({"id": "chatcmpl-fw", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
                "choices": [choice]})  # fmt: skip


def openai_events(turn: Turn, include_usage: bool) -> list[bytes]:
    events = [_chunk({"role": "assistant", "content": ""})]
    if turn.tool_call is not None:
        arguments = json.dumps(turn.tool_call.arguments)
        head = {"index": 0, "id": "call_1", "type": "function", "function": {"name": turn.tool_call.name,
                                                                            "arguments": ""}}  # fmt: skip
        events.append(_chunk({"tool_calls": [head]}))
        for piece in (arguments[:8], arguments[8:]):
            events.append(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
        events.append(_chunk({}, "tool_calls"))
    else:
        events += [_chunk({"content": word}) for word in words(turn.text)]
        events.append(_chunk({}, "stop"))
    if include_usage:  # stream_options.include_usage: a last chunk with no choices, as OpenAI sends it
        data = {"id": "chatcmpl-fw", "object": "chat.completion.chunk", "created": 1, "model": MODEL, "choices": []}
        events.append(sse({**data, "usage": _usage_openai()}))
    return [*events, sse("[DONE]")]


def _anthropic_content(turn: Turn) -> list[dict[str, Any]]:
    if turn.tool_call is not None:
        return [{"type": "tool_use", "id": "toolu_1", "name": turn.tool_call.name, "input": turn.tool_call.arguments}]
    return [{"type": "text", "text": turn.text}]


def anthropic_json(turn: Turn) -> dict[str, Any]:
    return {
        "id": "msg_fw",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": _anthropic_content(turn),
        "stop_reason": "tool_use" if turn.tool_call else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 12},
    }


def _event(data: dict[str, Any]) -> bytes:
    return sse(data, data["type"])


def anthropic_events(turn: Turn) -> list[bytes]:
    start = {**anthropic_json(turn), "content": [], "stop_reason": None, "usage": {"input_tokens": 20,
                                                                                    "output_tokens": 1}}  # fmt: skip
    events = [_event({"type": "message_start", "message": start})]
    if turn.tool_call is not None:
        block = {"type": "tool_use", "id": "toolu_1", "name": turn.tool_call.name, "input": {}}
        arguments = json.dumps(turn.tool_call.arguments)
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in (arguments[:8], arguments[8:])]
    else:
        block = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": word} for word in words(turn.text)]
    events.append(_event({"type": "content_block_start", "index": 0, "content_block": block}))
    events += [_event({"type": "content_block_delta", "index": 0, "delta": d}) for d in deltas]
    events.append(_event({"type": "content_block_stop", "index": 0}))
    stop = {"stop_reason": "tool_use" if turn.tool_call else "end_turn", "stop_sequence": None}
    events.append(_event({"type": "message_delta", "delta": stop, "usage": {"output_tokens": 12}}))
    return [*events, _event({"type": "message_stop"})]
