"""Google's Gemini API (generateContent, streamGenerateContent with alt=sse): answers, streams, errors.

A stream is a series of `data:` events each holding a GenerateContentResponse; the last one carries the
candidate's finishReason (STOP, MAX_TOKENS, ...) and there is no [DONE]. Errors are google.rpc statuses:
{"error": {"code", "message", "status"}}; a mid-stream error is such an object as an event.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from flakeproxy.wire.action import Reply, json_reply
from flakeproxy.wire.sse import SseEvent, format_event

STATUSES = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
    403: ("PERMISSION_DENIED", "The caller does not have permission"),
    404: ("NOT_FOUND", "models/gemini is not found for API version v1beta."),
    408: ("DEADLINE_EXCEEDED", "Request timed out."),
    413: ("INVALID_ARGUMENT", "Request payload size exceeds the limit."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    ),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
}


def _status(status: int) -> tuple[str, str]:
    return STATUSES.get(status, ("INTERNAL" if status >= 500 else "FAILED_PRECONDITION", f"HTTP {status}"))


class Gemini:
    """Gemini generateContent / streamGenerateContent."""

    api = "gemini"
    stream_error_type = "INTERNAL"
    stream_error_message = STATUSES[500][1]

    def error(
        self, status: int, message: str | None = None, headers: dict[str, str] | None = None, model: str | None = None
    ) -> Reply:
        name, text = _status(status)
        error: dict[str, Any] = {"code": status, "message": message or text, "status": name}
        given = {k.lower(): v for k, v in (headers or {}).items()}
        wait = given.pop("retry-after", None)  # Google says when to retry in the body, not in a header
        if status == 429 and wait is not None:
            error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{wait}s"}]
        return json_reply(status, {"error": error}, given)

    def stream_error(self, message: str | None = None, error_type: str | None = None) -> bytes:
        name = error_type or self.stream_error_type
        code = next((c for c, (n, _) in STATUSES.items() if n == name), 500)
        return format_event({"error": {"code": code, "message": message or self.stream_error_message, "status": name}})

    def _map_response(self, body: dict[str, Any], text: Any, tool: Any, finish: str | None) -> None:
        for candidate in body.get("candidates") or []:
            for part in (candidate.get("content") or {}).get("parts") or []:
                if text and isinstance(part.get("text"), str):
                    part["text"] = text(part["text"])
                call = part.get("functionCall")
                if tool and isinstance(call, dict):
                    name, args = tool(call.get("name", ""), json.dumps(call.get("args", {})))
                    call["name"] = name
                    try:
                        call["args"] = json.loads(args)
                    except ValueError:
                        call["args"] = args  # broken on purpose: not an object any more
            if finish:
                candidate["finishReason"] = "MAX_TOKENS"

    def map_json(self, body: Any, text: Any, tool: Any, finish: str | None = None) -> Any:
        body = copy.deepcopy(body)
        if isinstance(body, dict):
            self._map_response(body, text, tool, finish)
        return body

    def map_event(self, event: SseEvent, text: Any, tool: Any) -> bytes:
        data = event.json()
        if not isinstance(data, dict) or not data.get("candidates"):
            return event.raw
        self._map_response(data, text, tool, None)
        return format_event(data, event.event)

    def is_terminal(self, event: SseEvent) -> bool:
        data = event.json()
        if not isinstance(data, dict):
            return False
        return any(c.get("finishReason") for c in data.get("candidates") or [])

    def length_tail(self, seen: Any) -> list[bytes]:
        last = seen.last
        candidate = {"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": "MAX_TOKENS", "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate]}
        if last and last.get("modelVersion"):
            chunk["modelVersion"] = last["modelVersion"]
        return [format_event(chunk)]
