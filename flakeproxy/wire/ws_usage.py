"""The token usage of an LLM WebSocket connection, read from the events its server sent: the sum over the
responses made on it.

Where the counts come from (the openai SDK's types): the Realtime API's `response.done` carries
`response.usage` with `input_tokens`, `output_tokens` and `input_token_details.cached_tokens`
(`types/realtime/realtime_response_usage.py`); Responses over WebSocket sends the Responses stream's
`response.completed` / `response.incomplete` / `response.failed`, whose `response.usage` is the Responses API's
(flakeproxy.wire.usage.openai_responses). A response still under way when the connection ended (a close
mid-answer) makes the connection's usage unknown, with the counts of those that ended.
"""

from __future__ import annotations

import json
from typing import Any

from flakeproxy.wire.usage import Usage, openai_responses, unknown

ENDS = {"response.done", "response.completed", "response.incomplete", "response.failed"}


def _realtime(usage: Any) -> Usage:
    u = usage if isinstance(usage, dict) else {}
    details = u.get("input_token_details") if isinstance(u.get("input_token_details"), dict) else {}
    return openai_responses({**u, "input_tokens_details": details})


class WsUsage:
    """Sums the usage of each response that ends on the connection; `finish()` says the connection's."""

    def __init__(self) -> None:
        self.input_tokens = self.output_tokens = self.cached_tokens = 0
        self.open = 0  # responses created and not yet ended
        self.responses = 0
        self.missing: str | None = None  # why an ended response's usage is not known
        self.model: str | None = None

    def feed(self, content: bytes) -> None:
        try:
            event = json.loads(content)
        except ValueError:
            return
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "response.created":
            self.open += 1
        elif kind in ENDS:
            self.open = max(0, self.open - 1)
            self._ended(event.get("response"), kind == "response.done")
        elif kind == "session.created" and isinstance(event.get("session"), dict):
            self.model = self.model or _model(event["session"].get("model"))

    def _ended(self, response: Any, realtime: bool) -> None:
        response = response if isinstance(response, dict) else {}
        self.responses += 1
        self.model = _model(response.get("model")) or self.model
        usage = (_realtime if realtime else openai_responses)(response.get("usage"))
        if usage.unknown or usage.input_tokens is None or usage.output_tokens is None:
            self.missing = self.missing or f"a response ended without its usage ({usage.reason})"
            return
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cached_tokens += usage.cached_tokens or 0

    def finish(self) -> Usage:
        counts = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens, "model": self.model}
        counts["cached_tokens"] = self.cached_tokens
        if self.open:
            return unknown("a response was still under way when the WebSocket closed", **counts)
        if self.missing:
            return unknown(self.missing, **counts)
        note = None if self.responses else "no response was made on this WebSocket"
        return Usage(reason=note, **counts)


def _model(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
