"""The shapes of LLM APIs: error bodies, where the text and tool calls are, how streams end.

One class per API (openai chat completions, openai responses, anthropic messages), plus `Plain`
for tool APIs. Each works on parsed JSON (a buffered answer) and on single SSE events.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flakeproxy.wire.action import Reply, json_reply
from flakeproxy.wire.gemini import Gemini
from flakeproxy.wire.provider_errors import anthropic_error, openai_error
from flakeproxy.wire.sse import SseEvent, format_event

TextFn = Callable[[str], str]
ToolFn = Callable[[str, str], tuple[str, str]]  # (name, arguments JSON) -> (name, arguments JSON)


@dataclass
class StreamSeen:
    """What a stream cut at its word budget has passed so far, for the end a provider gives such an answer: the
    last event's data, the response the stream opened with (OpenAI Responses: response.created's), the output
    items it opened (by output index) and what each text part's deltas became."""

    last: dict[str, Any] | None = None
    opened: dict[str, Any] | None = None
    items: dict[Any, dict[str, Any]] = field(default_factory=dict)
    text: StreamText | None = None


class StreamText:
    """One stream's text transform that remembers what each text part's deltas became, for the events that repeat
    a part whole: OpenAI Responses streams it again in output_text.done, content_part.done, output_item.done and
    response.completed, and the SDKs build the answer from those (the Agents SDK from response.completed), so a
    rewrite of the deltas alone reached nothing the agent kept. A part is keyed by its output and content index."""

    def __init__(self, fn: TextFn) -> None:
        self.fn = fn
        self.parts: dict[tuple[Any, Any], list[str]] = {}

    def __call__(self, text: str) -> str:
        return self.fn(text)

    def delta(self, key: tuple[Any, Any], text: str) -> str:
        out = self.fn(text)
        self.parts.setdefault(key, []).append(out)
        return out

    def whole(self, key: tuple[Any, Any], text: str) -> str:
        """The part as its deltas became, the same in every event that repeats it (one with no deltas: the
        transform's answer to it whole, once)."""
        if key not in self.parts:
            self.parts[key] = [self.fn(text)]
        return "".join(self.parts[key])


STATUS_TEXT = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    408: "Request timeout",
    429: "Rate limit exceeded",
    500: "Internal server error",
    502: "Bad gateway",
    503: "Service unavailable",
    504: "Gateway timeout",
    529: "Overloaded",
}


def status_text(status: int) -> str:
    return STATUS_TEXT.get(status, f"HTTP {status}")


class Plain:
    """A tool API: a small JSON error body."""

    api = "plain"

    def error(
        self, status: int, message: str | None = None, headers: dict[str, str] | None = None, model: str | None = None
    ) -> Reply:
        return json_reply(status, {"error": {"code": status, "message": message or status_text(status)}}, headers)


class OpenAIChat(Plain):
    """OpenAI chat completions (/v1/chat/completions), JSON and SSE."""

    api = "openai"

    def error(
        self, status: int, message: str | None = None, headers: dict[str, str] | None = None, model: str | None = None
    ) -> Reply:
        body, all_headers = openai_error(status, message, headers or {}, model or "gpt-4o")
        return json_reply(status, body, all_headers)

    #: what a mid-stream error says when the fault does not choose (what this API sends mid-stream)
    stream_error_type = "server_error"
    stream_error_message = "The server had an error while processing your request. Sorry about that!"

    def stream_error(self, message: str | None = None, error_type: str | None = None) -> bytes:
        error = {
            "message": message or self.stream_error_message,
            "type": error_type or self.stream_error_type,
            "param": None,
            "code": None,
        }
        return format_event({"error": error})

    def map_json(self, body: Any, text: TextFn | None, tool: ToolFn | None, finish: str | None = None) -> Any:
        body = copy.deepcopy(body)
        for choice in body.get("choices") or []:
            message = choice.get("message") or {}
            if text and isinstance(message.get("content"), str):
                message["content"] = text(message["content"])
            for call in message.get("tool_calls") or []:
                fn = call.get("function") or {}
                if tool:
                    fn["name"], fn["arguments"] = tool(fn.get("name", ""), fn.get("arguments", ""))
            if finish:
                choice["finish_reason"] = finish
        return body

    def map_event(self, event: SseEvent, text: TextFn | None, tool: ToolFn | None) -> bytes:
        data = event.json()
        if not isinstance(data, dict) or not data.get("choices"):
            return event.raw
        emptied = kept = 0  # argument pieces a cut emptied / anything else the chunk still says
        for choice in data["choices"]:
            delta = choice.get("delta") or {}
            if text and isinstance(delta.get("content"), str):
                delta["content"] = text(delta["content"])
            kept += bool(delta.get("content") or choice.get("finish_reason") or delta.get("role"))
            for call in delta.get("tool_calls") or []:
                fn = call.get("function") or {}
                if not tool:
                    continue
                before = fn.get("arguments") or ""
                name, args = tool(fn.get("name") or "", before)
                if "name" in fn:
                    fn["name"] = name
                if "arguments" in fn:
                    fn["arguments"] = args
                emptied += bool(before and not args and not fn.get("name"))
                kept += bool(args or fn.get("name") or call.get("id"))
        if emptied and not kept:
            return b""  # a piece cut away entirely: the event goes too, as if it had never been generated
        return format_event(data, event.event)

    def is_terminal(self, event: SseEvent) -> bool:
        return event.data.strip() == "[DONE]"

    def length_tail(self, seen: StreamSeen) -> list[bytes]:
        base = {k: v for k, v in (seen.last or {}).items() if k in ("id", "object", "created", "model")}
        chunk = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
        return [format_event(chunk), format_event("[DONE]")]


class OpenAIResponses(OpenAIChat):
    """OpenAI responses (/v1/responses), JSON and typed SSE events."""

    api = "openai-responses"

    def stream_error(self, message: str | None = None, error_type: str | None = None) -> bytes:
        """Responses streams fail with their own `error` event; the kind is its code."""
        event = {
            "type": "error",
            "code": error_type or self.stream_error_type,
            "message": message or self.stream_error_message,
            "param": None,
        }
        return format_event(event, "error")

    def stream_failed(self, message: str | None = None, error_type: str | None = None) -> bytes:
        """The other way a Responses stream fails: a final `response.failed` carrying the error."""
        error = {"code": error_type or self.stream_error_type, "message": message or self.stream_error_message}
        response: dict[str, Any] = {
            "object": "response",
            "status": "failed",
            "output": [],
            "error": error,
            "incomplete_details": None,
        }
        return format_event({"type": "response.failed", "response": response}, "response.failed")

    def map_json(self, body: Any, text: TextFn | None, tool: ToolFn | None, finish: str | None = None) -> Any:
        body = copy.deepcopy(body)
        for item in body.get("output") or []:
            for part in item.get("content") or [] if text else []:
                if part.get("type") == "output_text" and isinstance(part.get("text"), str):
                    part["text"] = text(part["text"]) if text else part["text"]
            if tool and item.get("type") == "function_call":
                item["name"], item["arguments"] = tool(item.get("name", ""), item.get("arguments", ""))
        if finish:
            body["status"] = "incomplete"
            body["incomplete_details"] = {"reason": "max_output_tokens"}
        return body

    def map_event(self, event: SseEvent, text: TextFn | None, tool: ToolFn | None) -> bytes:
        data = event.json()
        if not isinstance(data, dict):
            return event.raw
        kind = data.get("type", "")
        key = (data.get("output_index"), data.get("content_index"))
        if text is not None and not isinstance(text, StreamText):  # MapEvents hands one per stream
            text = StreamText(text)
        if text and kind == "response.output_text.delta" and isinstance(data.get("delta"), str):
            data["delta"] = text.delta(key, data["delta"])
        elif text and kind == "response.output_text.done" and isinstance(data.get("text"), str):
            data["text"] = text.whole(key, data["text"])
        elif text and kind == "response.content_part.done" and _is_text(data.get("part")):
            data["part"]["text"] = text.whole(key, data["part"]["text"])
        elif tool and kind == "response.function_call_arguments.delta":
            before = data.get("delta", "")
            data["delta"] = tool("", before)[1]
            if before and not data["delta"]:
                return b""  # cut away entirely: the event goes too
        elif tool and kind == "response.function_call_arguments.done":
            whole_args = getattr(tool, "whole", None)  # a per-stream transform knows what the deltas became
            args = data.get("arguments", "")
            data["arguments"] = whole_args(args) if whole_args else tool("", args)[1]
        elif kind == "response.output_item.done" and isinstance(data.get("item"), dict):
            if not self._items([data["item"]], text, tool, data.get("output_index")):
                return event.raw
        elif kind in ("response.completed", "response.incomplete") and isinstance(data.get("response"), dict):
            if not self._items(data["response"].get("output") or [], text, tool):
                return event.raw
        else:
            return event.raw
        return format_event(data, event.event)

    @staticmethod
    def _items(items: list[Any], text: StreamText | None, tool: ToolFn | None, index: Any = None) -> bool:
        """The output items an event repeats whole (output_item.done: one, at `index`; response.completed: all),
        their text parts and tool arguments as the deltas became; whether any changed."""
        changed = False
        whole_args = getattr(tool, "whole", None)
        for n, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            at = index if index is not None else n
            if text is not None:
                changed = _whole_parts(item, at, text) or changed
            if whole_args and item.get("type") == "function_call":  # the final answer repeats what the deltas became
                before, item["arguments"] = item.get("arguments", ""), whole_args(item.get("arguments", ""))
                changed = changed or item["arguments"] != before
        return changed

    def is_terminal(self, event: SseEvent) -> bool:
        return (event.event or "") in ("response.completed", "response.incomplete", "response.failed")

    def length_tail(self, seen: StreamSeen) -> list[bytes]:
        """As the API ends an answer cut at max_output_tokens: the text part, its item and the response closed with
        what the deltas became (the item and the response `incomplete`), numbered on from the last event. A trial's
        Agents SDK got `output: []` before and raised ModelBehaviorError, as the real truncation would not make it."""
        seq = (seen.last or {}).get("sequence_number")
        events: list[tuple[str, dict[str, Any]]] = []
        output: list[dict[str, Any]] = []
        for index, opened in sorted(seen.items.items(), key=lambda kv: str(kv[0])):
            item = {**opened, "status": "incomplete"}
            if item.get("type") == "message" and seen.text is not None:
                parts = []
                for (at, c), pieces in sorted(seen.text.parts.items(), key=lambda kv: str(kv[0])):
                    if at != index:
                        continue
                    part = {"type": "output_text", "text": "".join(pieces), "annotations": []}
                    where = {"item_id": item.get("id"), "output_index": index, "content_index": c}
                    events += [
                        ("response.output_text.done", {**where, "text": part["text"]}),
                        ("response.content_part.done", {**where, "part": part}),
                    ]
                    parts.append(part)
                item["content"] = parts
            events.append(("response.output_item.done", {"output_index": index, "item": item}))
            output.append(item)
        response = {
            "object": "response",
            **{k: v for k, v in (seen.opened or {}).items() if k not in ("output", "usage", "status")},
            "status": "incomplete",
            "output": output,
            "incomplete_details": {"reason": "max_output_tokens"},
        }
        events.append(("response.incomplete", {"response": response}))
        out = []
        for n, (kind, data) in enumerate(events, start=1):
            numbered = {"type": kind, **data, **({"sequence_number": seq + n} if isinstance(seq, int) else {})}
            out.append(format_event(numbered, kind))
        return out


class Anthropic(Plain):
    """Anthropic messages (/v1/messages), JSON and named SSE events."""

    api = "anthropic"

    def error(
        self, status: int, message: str | None = None, headers: dict[str, str] | None = None, model: str | None = None
    ) -> Reply:
        body, all_headers = anthropic_error(status, message, headers or {})
        return json_reply(status, body, all_headers)

    stream_error_type = "overloaded_error"
    stream_error_message = "Overloaded"

    def stream_error(self, message: str | None = None, error_type: str | None = None) -> bytes:
        error = {"type": error_type or self.stream_error_type, "message": message or self.stream_error_message}
        return format_event({"type": "error", "error": error}, "error")

    def map_json(self, body: Any, text: TextFn | None, tool: ToolFn | None, finish: str | None = None) -> Any:
        body = copy.deepcopy(body)
        for block in body.get("content") or []:
            if text and block.get("type") == "text" and isinstance(block.get("text"), str):
                block["text"] = text(block["text"])
            if tool and block.get("type") == "tool_use":
                name, args = tool(block.get("name", ""), json.dumps(block.get("input", {})))
                block["name"] = name
                try:
                    block["input"] = json.loads(args)
                except ValueError:
                    block["input"] = args  # broken on purpose: not an object any more
        if finish:
            body["stop_reason"] = "max_tokens"
        return body

    def map_event(self, event: SseEvent, text: TextFn | None, tool: ToolFn | None) -> bytes:
        data = event.json()
        if not isinstance(data, dict):
            return event.raw
        delta = data.get("delta") or {}
        block = data.get("content_block") or {}
        if text and delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
            delta["text"] = text(delta["text"])
        elif tool and delta.get("type") == "input_json_delta":
            before = delta.get("partial_json", "")
            delta["partial_json"] = tool("", before)[1]
            if before and not delta["partial_json"]:
                return b""  # cut away entirely: the event goes too
        elif tool and block.get("type") == "tool_use":
            block["name"] = tool(block.get("name", ""), "")[0]
        else:
            return event.raw
        return format_event(data, event.event)

    def is_terminal(self, event: SseEvent) -> bool:
        return event.event == "message_stop"

    def length_tail(self, seen: StreamSeen) -> list[bytes]:
        index = (seen.last or {}).get("index", 0)
        return [
            format_event({"type": "content_block_stop", "index": index}, "content_block_stop"),
            format_event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
                    "usage": {"output_tokens": 0},
                },
                "message_delta",
            ),
            format_event({"type": "message_stop"}, "message_stop"),
        ]


LlmProvider = OpenAIChat | Anthropic | Gemini
LLM_PROVIDERS: dict[str, LlmProvider] = {p.api: p for p in (OpenAIChat(), OpenAIResponses(), Anthropic(), Gemini())}


def provider(api: str | None) -> Plain | Gemini:
    """The provider for a target's api (None: a plain tool API)."""
    return LLM_PROVIDERS[api] if api else Plain()


def llm_provider(api: str | None) -> LlmProvider:
    """The LLM provider for api; OpenAI's shape when the call was aimed at without an api."""
    return LLM_PROVIDERS[api or "openai"]


def _is_text(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str)


def _whole_parts(item: dict[str, Any], index: Any, text: StreamText) -> bool:
    """An output item's text parts as their deltas became; whether any changed."""
    changed = False
    for c, part in enumerate(item.get("content") or []):
        if _is_text(part):
            before, part["text"] = part["text"], text.whole((index, c), part["text"])
            changed = changed or part["text"] != before
    return changed
