"""Error replies as the LLM providers send them: the body's type/code/message, and the headers SDKs read.

OpenAI sends `x-request-id` and `x-ratelimit-*` on its answers, `retry-after-ms` beside `retry-after`
when it says when to come back; Anthropic sends `request-id` (and the same id as the body's
`request_id`) and `anthropic-ratelimit-*`. Both SDKs honour `x-should-retry` (true/false) over the
status when deciding to retry, which lets a fault reproduce a real "do not retry" 5xx.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

OPENAI_MESSAGES = {
    400: "Invalid request.",
    401: "Incorrect API key provided: sk-***. You can find your API key at https://platform.openai.com/account/api-keys.",
    404: "The model does not exist or you do not have access to it.",
    408: "Request timed out.",
    413: "Request too large.",
    429: "Rate limit reached for {model} in organization org-flakeproxy on requests per min (RPM): Limit 500, "
    "Used 500, Requested 1. Please try again in {wait}. Visit https://platform.openai.com/account/rate-limits "
    "to learn more.",
    500: "The server had an error while processing your request. Sorry about that!",
    502: "Bad gateway.",
    503: "The server is overloaded or not ready yet.",
    504: "Gateway timeout.",
}
OPENAI_TYPES: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}
ANTHROPIC_MESSAGES = {
    400: "Invalid request.",
    401: "invalid x-api-key",
    403: "Your API key does not have permission to use the specified resource.",
    404: "The requested resource could not be found.",
    408: "Request timed out.",
    413: "Request exceeds the maximum allowed number of bytes.",
    429: "This request would exceed the rate limit for your organization of 50 requests per minute. For details, "
    "refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. "
    "Please reduce the prompt length or the maximum tokens requested, or try again later.",
    500: "Internal server error",
    504: "Gateway timeout",
    529: "Overloaded",
}
ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def _reset_at(seconds: int) -> str:
    at = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=seconds)
    return at.isoformat().replace("+00:00", "Z")


def _retry_after_s(headers: dict[str, str]) -> int | None:
    try:
        return int(float(headers["retry-after"]))
    except (KeyError, ValueError):
        return None


def openai_error(status: int, message: str | None, headers: dict[str, str], model: str) -> tuple[Any, dict[str, str]]:
    """The body and headers of an OpenAI error reply (headers given win)."""
    kind, code = OPENAI_TYPES.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    wait = _retry_after_s(headers)
    text = message or OPENAI_MESSAGES.get(status, f"HTTP {status}")
    text = text.format(model=model, wait=f"{wait if wait is not None else 1}s") if status == 429 else text
    out = {
        "x-request-id": f"req_{uuid.uuid4().hex}",
        "openai-processing-ms": "12",
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "0" if status == 429 else "499",
        "x-ratelimit-reset-requests": f"{wait if wait is not None else 0}s",
        "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-remaining-tokens": "29000",
        "x-ratelimit-reset-tokens": "2ms",
    }
    if wait is not None:
        out["retry-after-ms"] = str(wait * 1000)
    body = {"error": {"message": text, "type": kind, "param": None, "code": code}}
    return body, {**out, **{k.lower(): v for k, v in headers.items()}}


def anthropic_error(status: int, message: str | None, headers: dict[str, str]) -> tuple[Any, dict[str, str]]:
    """The body and headers of an Anthropic error reply (headers given win)."""
    kind = ANTHROPIC_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    request_id = f"req_{uuid.uuid4().hex[:24]}"
    wait = _retry_after_s(headers)
    out = {
        "request-id": request_id,
        "anthropic-organization-id": "00000000-0000-0000-0000-000000000000",
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "0" if status == 429 else "49",
        "anthropic-ratelimit-requests-reset": _reset_at(wait or 0),
        "anthropic-ratelimit-tokens-limit": "40000",
        "anthropic-ratelimit-tokens-remaining": "39000",
        "anthropic-ratelimit-tokens-reset": _reset_at(wait or 0),
    }
    text = message or ANTHROPIC_MESSAGES.get(status, f"HTTP {status}")
    body = {"type": "error", "error": {"type": kind, "message": text}, "request_id": request_id}
    return body, {**out, **{k.lower(): v for k, v in headers.items()}}


def should_retry_header(should_retry: bool | None) -> dict[str, str]:
    """The x-should-retry header both SDKs honour (None: not sent, the SDK decides by status)."""
    return {} if should_retry is None else {"x-should-retry": "true" if should_retry else "false"}
