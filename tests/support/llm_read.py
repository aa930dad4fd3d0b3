"""Read what a client got from an LLM endpoint, independently of flakeproxy's own wire code."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.support.http import Seen


@dataclass
class Answer:
    text: str = ""
    finish: str | None = None
    tool_args: str = ""
    tool_name: str = ""
    error: Any = None  # an error event or error body
    terminal: bool = False  # [DONE] / message_stop / response.completed|incomplete seen
    events: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _events(body: bytes) -> list[tuple[str | None, str]]:
    out = []
    for block in body.decode().replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        out.append((name, "\n".join(data)))
    return out


def read(api: str, seen: Seen) -> Answer:
    streamed = seen.headers.get("content-type", "").startswith("text/event-stream")
    if not streamed:
        return _read_json(api, json.loads(seen.body))
    answer = Answer()
    for name, data in _events(seen.body):
        answer.events += 1
        if data == "[DONE]":
            answer.terminal = True
            continue
        event = json.loads(data)
        {"openai": _chat_event, "anthropic": _anthropic_event, "openai-responses": _responses_event}[api](
            answer, name, event
        )
    return answer


def _read_json(api: str, body: dict[str, Any]) -> Answer:
    answer = Answer(terminal=True)
    if "error" in body:
        answer.error = body
        return answer
    if api == "openai":
        choice = body["choices"][0]
        answer.text = choice["message"].get("content") or ""
        answer.finish = choice["finish_reason"]
        for call in choice["message"].get("tool_calls") or []:
            answer.tool_name, answer.tool_args = call["function"]["name"], call["function"]["arguments"]
    elif api == "anthropic":
        answer.finish = body["stop_reason"]
        for block in body["content"]:
            if block["type"] == "text":
                answer.text += block["text"]
            if block["type"] == "tool_use":
                answer.tool_name = block["name"]
                answer.tool_args = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
    else:
        answer.finish = (body.get("incomplete_details") or {}).get("reason") or body["status"]
        for item in body["output"]:
            for part in item.get("content") or []:
                answer.text += part.get("text", "")
            if item["type"] == "function_call":
                answer.tool_name, answer.tool_args = item["name"], item["arguments"]
    return answer


def _chat_event(answer: Answer, name: str | None, event: dict[str, Any]) -> None:
    if "error" in event:
        answer.error = event
        return
    for choice in event.get("choices") or []:
        delta = choice.get("delta") or {}
        answer.text += delta.get("content") or ""
        for call in delta.get("tool_calls") or []:
            answer.tool_name += call.get("function", {}).get("name") or ""
            answer.tool_args += call.get("function", {}).get("arguments") or ""
        answer.finish = choice.get("finish_reason") or answer.finish


def _anthropic_event(answer: Answer, name: str | None, event: dict[str, Any]) -> None:
    kind = event.get("type")
    if kind == "error":
        answer.error = event
    elif kind == "content_block_start" and event["content_block"]["type"] == "tool_use":
        answer.tool_name = event["content_block"]["name"]
    elif kind == "content_block_delta":
        answer.text += event["delta"].get("text", "")
        answer.tool_args += event["delta"].get("partial_json", "")
    elif kind == "message_delta":
        answer.finish = event["delta"].get("stop_reason")
    elif kind == "message_stop":
        answer.terminal = True


def _responses_event(answer: Answer, name: str | None, event: dict[str, Any]) -> None:
    kind = event.get("type")
    if kind == "error":
        answer.error = event
    elif kind == "response.output_text.delta":
        answer.text += event["delta"]
    elif kind == "response.output_item.added" and event["item"]["type"] == "function_call":
        answer.tool_name = event["item"]["name"]
    elif kind == "response.function_call_arguments.delta":
        answer.tool_args += event["delta"]
    elif kind in ("response.completed", "response.incomplete"):
        answer.terminal = True
        response = event["response"]
        answer.finish = (response.get("incomplete_details") or {}).get("reason") or response.get("status")
