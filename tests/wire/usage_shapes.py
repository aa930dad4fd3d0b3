"""Answers as the providers send them, usage included, written from their API references and SDK types
(openai-python types/completion_usage.py and responses/response_usage.py, anthropic-sdk-python types/usage.py
and message_delta_usage.py, google-genai GenerateContentResponseUsageMetadata), independently of
flakeproxy.wire.usage. Each stream is a list of events exactly as they come on the wire."""

from __future__ import annotations

import json
from typing import Any


def sse(data: Any, event: str | None = None, newline: str = "\n") -> bytes:
    head = f"event: {event}{newline}" if event else ""
    body = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {body}{newline}{newline}".encode()


# --- OpenAI chat completions -------------------------------------------------------------------------------

CHAT_USAGE = {
    "prompt_tokens": 2066,
    "completion_tokens": 310,
    "total_tokens": 2376,
    "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
    "completion_tokens_details": {
        "reasoning_tokens": 256,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    },
}

CHAT_JSON = {
    "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
    "object": "chat.completion",
    "created": 1741570283,
    "model": "o4-mini-2025-04-16",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "AAPL is at $189.50.", "refusal": None, "annotations": []},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": CHAT_USAGE,
    "service_tier": "default",
    "system_fingerprint": None,
}


def _chat_chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    return {
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion.chunk",
        "created": 1741570283,
        "model": "o4-mini-2025-04-16",
        "service_tier": "default",
        "system_fingerprint": None,
        "choices": choices,
        "usage": usage,
        "obfuscation": "x9Q",
    }


def chat_stream(include_usage: bool) -> list[bytes]:
    """With include_usage every chunk has "usage": null and one more chunk (choices: []) carries the count."""
    chunks = [_chat_chunk({"role": "assistant", "content": "", "refusal": None})]
    chunks += [_chat_chunk({"content": w}) for w in ("AAPL", " is", " at", " $189.50.")]
    chunks.append(_chat_chunk({}, "stop"))
    if include_usage:
        chunks.append(_chat_chunk(None, usage=CHAT_USAGE))
    else:
        chunks = [{k: v for k, v in c.items() if k != "usage"} for c in chunks]
    return [*(sse(c) for c in chunks), sse("[DONE]")]


# --- OpenAI Responses ---------------------------------------------------------------------------------------

RESPONSES_USAGE = {
    "input_tokens": 328,
    "input_tokens_details": {"cached_tokens": 128},
    "output_tokens": 52,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 380,
}


def responses_json(text: str = "AAPL is at $189.50.", status: str = "completed") -> dict[str, Any]:
    item = {
        "id": "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c6ea87e9",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return {
        "id": "resp_67ccd3a9da748190baa7f1570fe91ac604becb25c6ea87e9",
        "object": "response",
        "created_at": 1741476777,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": "You are a careful financial assistant.",
        "max_output_tokens": None,
        "model": "gpt-4.1-2025-04-14",
        "output": [item],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": RESPONSES_USAGE,
        "user": None,
        "metadata": {},
    }


def responses_stream(text: str = "AAPL is at $189.50.") -> list[bytes]:
    done = responses_json(text)
    start = {**done, "status": "in_progress", "output": [], "usage": None}
    events = [sse({"type": "response.created", "sequence_number": 0, "response": start}, "response.created")]
    events.append(
        sse({"type": "response.in_progress", "sequence_number": 1, "response": start}, "response.in_progress")
    )
    n = 2
    for word in text.split(" "):
        delta = {
            "type": "response.output_text.delta",
            "sequence_number": n,
            "item_id": "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c6ea87e9",
            "output_index": 0,
            "content_index": 0,
            "delta": word + " ",
            "logprobs": [],
        }
        events.append(sse(delta, "response.output_text.delta"))
        n += 1
    events.append(sse({"type": "response.completed", "sequence_number": n, "response": done}, "response.completed"))
    return events


# --- Anthropic messages -------------------------------------------------------------------------------------

ANTHROPIC_JSON = {
    "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [{"type": "text", "text": "AAPL is at $189.50."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 21,
        "cache_creation_input_tokens": 188,
        "cache_read_input_tokens": 2048,
        "cache_creation": {"ephemeral_5m_input_tokens": 188, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 393,
        "output_tokens_details": {"thinking_tokens": 120},
        "service_tier": "standard",
    },
}


def anthropic_stream(delta_repeats_input: bool = True) -> list[bytes]:
    """message_start's usage has the input counts and a provisional output count; message_delta's cumulative
    counts overwrite it (recent API versions repeat the input counts there)."""
    start_usage = {
        "input_tokens": 21,
        "cache_creation_input_tokens": 188,
        "cache_read_input_tokens": 2048,
        "output_tokens": 1,
        "service_tier": "standard",
    }
    message = {**ANTHROPIC_JSON, "content": [], "stop_reason": None, "usage": start_usage}
    events = [sse({"type": "message_start", "message": message}, "message_start")]
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    events.append(sse(block, "content_block_start"))
    events.append(sse({"type": "ping"}, "ping"))
    for word in ("AAPL", " is", " at", " $189.50."):
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word}}
        events.append(sse(delta, "content_block_delta"))
    events.append(sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
    usage: dict[str, Any] = {"output_tokens": 393, "output_tokens_details": {"thinking_tokens": 120}}
    if delta_repeats_input:
        usage = {"input_tokens": 21, "cache_creation_input_tokens": 188, "cache_read_input_tokens": 2048, **usage}
    stop = {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": usage}
    events.append(sse(stop, "message_delta"))
    events.append(sse({"type": "message_stop"}, "message_stop"))
    return events


# --- Gemini -------------------------------------------------------------------------------------------------

GEMINI_FINAL_USAGE = {
    "promptTokenCount": 1043,
    "candidatesTokenCount": 14,
    "totalTokenCount": 1577,
    "cachedContentTokenCount": 1024,
    "thoughtsTokenCount": 520,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 1043}],
    "cacheTokensDetails": [{"modality": "TEXT", "tokenCount": 1024}],
}


def _gemini_chunk(text: str, finish: str | None, usage: dict[str, Any]) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mLVWaNqkJ5-qz7IPi7TquQ4",
    }


GEMINI_JSON = _gemini_chunk("AAPL is at $189.50.", "STOP", GEMINI_FINAL_USAGE)


def gemini_stream() -> list[bytes]:
    """Every chunk carries the count so far (the prompt's, then with candidates); the API ends lines with CRLF."""
    partial = {"promptTokenCount": 1043, "totalTokenCount": 1563, "thoughtsTokenCount": 520}
    chunks = [_gemini_chunk("AAPL is", None, partial), _gemini_chunk(" at", None, partial)]
    chunks.append(_gemini_chunk(" $189.50.", "STOP", GEMINI_FINAL_USAGE))
    return [sse(c, newline="\r\n") for c in chunks]
