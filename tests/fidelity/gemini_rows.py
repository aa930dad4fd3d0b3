"""The google-genai rows of the fidelity table: Gemini's errors (google.rpc statuses) and answer ends."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tests.fidelity.real_upstream import Real, sse
from tests.fidelity.row import Row


def gemini_error(status: int, name: str, message: str, **extra: Any) -> Real:
    return Real("status", status, {"error": {"code": status, "message": message, "status": name, **extra}})


QUOTA = "You exceeded your current quota, please check your plan and billing details."
RETRY_INFO = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}]


def gemini_rows() -> list[Row]:
    g = "py-gemini"
    internal = "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
    return [
        Row(
            "rate_limit",
            g,
            "json",
            replace(gemini_error(429, "RESOURCE_EXHAUSTED", QUOTA, details=RETRY_INFO), times=1),
            {"mode": "rate_limit", "retry_after_s": 1, "times": 1},
            "",
        ),
        Row(
            "overloaded",
            g,
            "json",
            gemini_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
            {"mode": "overloaded"},
            "",
        ),
        Row("timeout", g, "json", Real("hang", seconds=1.5), {"mode": "timeout", "delay_ms": 1500}, "", timeout=0.5),
        Row("error_500", g, "json", gemini_error(500, "INTERNAL", internal), {"mode": "error", "error_code": 500}, ""),
        Row(
            "context_length_exceeded",
            g,
            "json",
            gemini_error(
                400,
                "INVALID_ARGUMENT",
                "The input token count (130000) exceeds the maximum number of tokens allowed (128000).",
            ),
            {"mode": "context_length_exceeded"},
            "",
        ),
        Row(
            "truncated_response",
            g,
            "json",
            Real("truncate", after=4),
            {"mode": "truncated_response", "max_tokens": 4},
            "",
        ),
        Row(
            "truncated_response",
            g,
            "stream",
            Real("truncate", after=4),
            {"mode": "truncated_response", "max_tokens": 4},
            "",
        ),
        Row("stream_cut", g, "stream", Real("cut", after=4), {"mode": "stream_cut", "after_events": 4}, ""),
        Row(
            "mid_stream_error",
            g,
            "stream",
            Real(
                "stream_error", after=3, event=sse({"error": {"code": 500, "message": internal, "status": "INTERNAL"}})
            ),
            {"mode": "mid_stream_error", "after_events": 3},
            "",
        ),
    ]
