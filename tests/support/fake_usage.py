"""The usage the fake LLM upstreams report, in each provider's real shape (see flakeproxy.wire.usage for the
fields). The counts follow the request, deterministically, so a test can add up what the fake reported: the
input is about four characters a token of the request's JSON (`prompt_tokens(body)`), the output the answer's
words or a tool call's argument characters over four (`completion_tokens(body)`)."""

from __future__ import annotations

import json
from typing import Any

ANSWER_TOKENS = 13  # the words of tests.support.upstream.ANSWER
TOOL_TOKENS = 9  # len(TOOL_ARGS) // 4


def prompt_tokens(body: dict[str, Any]) -> int:
    return max(1, len(json.dumps(body, sort_keys=True)) // 4)


def completion_tokens(body: dict[str, Any]) -> int:
    return TOOL_TOKENS if body.get("tools") else ANSWER_TOKENS


def chat_usage(body: dict[str, Any]) -> dict[str, Any]:
    """A chat completion's `usage` (and the last streamed chunk's, with include_usage)."""
    given, made = prompt_tokens(body), completion_tokens(body)
    return {
        "prompt_tokens": given,
        "completion_tokens": made,
        "total_tokens": given + made,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def include_usage(body: dict[str, Any]) -> bool:
    return bool((body.get("stream_options") or {}).get("include_usage"))


def responses_usage(body: dict[str, Any]) -> dict[str, Any]:
    given, made = prompt_tokens(body), completion_tokens(body)
    return {
        "input_tokens": given,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": made,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": given + made,
    }


def anthropic_usage(body: dict[str, Any], output_tokens: int | None = None) -> dict[str, Any]:
    """A message's `usage`; message_start's has output_tokens 1 (pass it), message_delta's the final count."""
    return {
        "input_tokens": prompt_tokens(body),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": completion_tokens(body) if output_tokens is None else output_tokens,
        "service_tier": "standard",
    }


def gemini_usage(body: dict[str, Any], candidates: int | None) -> dict[str, Any]:
    """usageMetadata: every streamed chunk has the prompt's count; the last one the candidates' too (None: a
    chunk before the last). Counts that are 0 are left out, as the API's JSON does."""
    given = prompt_tokens(body)
    if candidates is None:
        return {"promptTokenCount": given, "totalTokenCount": given}
    meta: dict[str, Any] = {"promptTokenCount": given, "candidatesTokenCount": candidates}
    meta = {k: v for k, v in meta.items() if v}
    return {
        **meta,
        "totalTokenCount": given + candidates,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": given}],
    }
