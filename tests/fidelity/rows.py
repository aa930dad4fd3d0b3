"""The fidelity table: each row is one client, one real failure (as the provider serves it) and the flakeproxy
fault meant to be indistinguishable from it, with what the client sees. Pure data: scripts/fidelity_table
renders the table of docs/performance.md from it without running anything."""

from __future__ import annotations

from dataclasses import replace

from tests.fidelity.gemini_rows import gemini_rows
from tests.fidelity.real_upstream import Real, sse
from tests.fidelity.row import Row
from tests.fidelity.sees import SEES

PY = ("py-openai", "py-anthropic")
NODE = ("node-openai", "node-anthropic")
CLAUDE = ("py-anthropic", "node-anthropic")
OAI_ID, CLAUDE_ID = "req_5f1c0a8e2b7d4c9a", "req_011CWxY7b2QmKz3uRj9pTn4v"


def openai_error(status: int, message: str, kind: str, code: str | None, **headers: str) -> Real:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return Real("status", status, body, {"x-request-id": OAI_ID, **headers})


def anthropic_error(status: int, message: str, kind: str, **headers: str) -> Real:
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": CLAUDE_ID}
    return Real("status", status, body, {"request-id": CLAUDE_ID, **headers})


RPM = (
    "Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 500, Used 500, "
    "Requested 1. Please try again in 1s. Visit https://platform.openai.com/account/rate-limits to learn more."
)
REAL = {
    "rate_limit": {
        "openai": openai_error(
            429, RPM, "requests", "rate_limit_exceeded", **{"retry-after": "1"}, **{"retry-after-ms": "1000"}
        ),
        "anthropic": anthropic_error(
            429, "This request would exceed the rate limit.", "rate_limit_error", **{"retry-after": "1"}
        ),
    },
    "error_500": {
        "openai": openai_error(500, "The server had an error while processing your request.", "server_error", None),
        "anthropic": anthropic_error(500, "Internal server error", "api_error"),
    },
    "overloaded_no_retry": {
        "openai": openai_error(503, "The server is overloaded.", "server_error", None, **{"x-should-retry": "false"}),
        "anthropic": anthropic_error(529, "Overloaded", "overloaded_error", **{"x-should-retry": "false"}),
    },
    "context_length_exceeded": {
        "openai": Real(
            "status",
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 128000 tokens.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
            {"x-request-id": OAI_ID},
        ),
        "anthropic": anthropic_error(
            400, "prompt is too long: 210000 tokens > 200000 maximum", "invalid_request_error"
        ),
    },
    "request_timeout_408": {
        "openai": openai_error(408, "Request timed out.", "invalid_request_error", None),
        "anthropic": anthropic_error(408, "Request timed out.", "timeout_error"),
    },
}
INJECT = {
    "rate_limit": {"mode": "rate_limit", "retry_after_s": 1, "times": 1},
    "error_500": {"mode": "error", "error_code": 500},
    "overloaded_no_retry": {"mode": "overloaded", "should_retry": False},
    "context_length_exceeded": {"mode": "context_length_exceeded"},
    "request_timeout_408": {"mode": "error", "error_code": 408},
}
REAL_TIMES = {"rate_limit": 1}


def _status_rows() -> list[Row]:
    rows = []
    for name, by_api in REAL.items():
        for client in PY + NODE:
            api = "openai" if client.endswith("openai") else "anthropic"
            real = by_api[api]
            if name in REAL_TIMES:
                real = Real(real.kind, real.status, real.body, real.headers, times=REAL_TIMES[name])
            rows.append(Row(name, client, "json", real, INJECT[name], ""))
    too_large = anthropic_error(413, "Request exceeds the maximum allowed number of bytes.", "request_too_large")
    rows += [Row("request_too_large", c, "json", too_large, {"mode": "request_too_large"}, "") for c in CLAUDE]
    retry_400 = openai_error(400, "Invalid request.", "invalid_request_error", None, **{"x-should-retry": "true"})
    inject_400 = {"mode": "error", "error_code": 400, "message": "Invalid request.", "should_retry": True}
    rows += [Row("should_retry_400", c, "json", retry_400, inject_400, "") for c in ("py-openai", "node-openai")]
    return rows


def _stream_error(api: str) -> bytes:
    if api == "openai":
        return sse(
            {
                "error": {
                    "message": "The server had an error while processing your request. Sorry about that!",
                    "type": "server_error",
                    "param": None,
                    "code": None,
                }
            }
        )
    if api == "responses":
        return sse(
            {"type": "error", "code": "server_error", "message": "The server had an error.", "param": None}, "error"
        )
    return sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error")


def _stream_rows() -> list[Row]:
    rows = []
    for client in PY + NODE:
        api = "openai" if client.endswith("openai") else "anthropic"
        after = 4 if api == "openai" else 5
        rows += [
            Row(
                "stream_cut",
                client,
                "stream",
                Real("cut", after=after),
                {"mode": "stream_cut", "after_events": after},
                "",
            ),
            Row(
                "mid_stream_error",
                client,
                "stream",
                Real("stream_error", after=3, event=_stream_error(api)),
                {"mode": "mid_stream_error", "after_events": 3},
                "",
            ),
            Row(
                "truncated_response",
                client,
                "stream",
                Real("truncate", after=4),
                {"mode": "truncated_response", "max_tokens": 4},
                "",
            ),
            Row(
                "tool_call_corruption",
                client,
                "tools_stream",
                Real("tool_prefix", after=5),
                {"mode": "tool_call_corruption", "corruption": "truncate_json"},
                "",
            ),
            Row(
                "stream_reset",
                client,
                "stream",
                Real("reset", after=3),
                {"mode": "stream_reset", "after_events": 3},
                "",
            ),
        ]
    for client in PY:
        rows += [
            Row(
                "truncated_response",
                client,
                "json",
                Real("truncate", after=4),
                {"mode": "truncated_response", "max_tokens": 4},
                "",
            ),
            Row(
                "stream_reset",
                client,
                "json",
                Real("reset", after_bytes=40),
                {"mode": "stream_reset", "after_bytes": 40},
                "",
            ),
            Row(
                "timeout",
                client,
                "json",
                Real("hang", seconds=1.5),
                {"mode": "timeout", "delay_ms": 1500},
                "",
                timeout=0.5,
            ),
        ]
    failed = {
        "type": "response.failed",
        "response": {
            "object": "response",
            "status": "failed",
            "output": [],
            "error": {"code": "server_error", "message": "The server had an error."},
            "incomplete_details": None,
        },
    }
    rows.append(
        Row(
            "response_failed",
            "py-openai",
            "responses_stream",
            Real("stream_error", after=3, event=sse(failed, "response.failed")),
            {"mode": "mid_stream_error", "after_events": 3, "responses_event": "response.failed"},
            "",
        )
    )
    for client in NODE:
        rows.append(
            Row(
                "timeout",
                client,
                "json",
                Real("hang", seconds=1.5),
                {"mode": "timeout", "delay_ms": 1500},
                "",
                timeout=0.5,
            )
        )
    rows.append(
        Row(
            "mid_stream_error",
            "py-openai",
            "responses_stream",
            Real("stream_error", after=3, event=_stream_error("responses")),
            {"mode": "mid_stream_error", "after_events": 3},
            "",
        )
    )
    return rows


ROWS: list[Row] = [replace(row, sees=SEES[row.id]) for row in _status_rows() + _stream_rows() + gemini_rows()]
