"""Edits to JSON answers and requests: drift, planted text, padding, poisoned conversations."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

TextFn = Callable[[str], str]
JsonFn = Callable[[Any], Any]


def rename_drop(data: Any, rename: dict[str, str], drop: list[str]) -> Any:
    """Rename and drop keys at every depth."""
    if isinstance(data, dict):
        return {rename.get(k, k): rename_drop(v, rename, drop) for k, v in data.items() if k not in drop}
    if isinstance(data, list):
        return [rename_drop(v, rename, drop) for v in data]
    return data


def map_strings(data: Any, fn: TextFn) -> Any:
    """Apply fn to every string value (not to keys) at every depth."""
    if isinstance(data, dict):
        return {k: map_strings(v, fn) for k, v in data.items()}
    if isinstance(data, list):
        return [map_strings(v, fn) for v in data]
    return fn(data) if isinstance(data, str) else data


def is_jsonrpc(data: Any) -> bool:
    return isinstance(data, dict) and "jsonrpc" in data


def _json_text(text: str, on_json: JsonFn) -> str | None:
    """A text that is a JSON object or array, edited as JSON and written back; None when it is not one."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return json.dumps(on_json(doc)) if isinstance(doc, dict | list) else None


def map_mcp_result(message: Any, on_text: TextFn | None = None, on_json: JsonFn | None = None) -> Any:
    """Edit every channel of an MCP tools/call result that a client may read: each text content (with on_json
    when the text is a JSON document and on_json is given, else with on_text) and structuredContent (with
    on_json, else on_text on each of its strings). Clients of structured output (pydantic-ai's MCP toolset,
    for one) read only structuredContent; others only the text."""
    if not isinstance(message, dict) or not isinstance(message.get("result"), dict):
        return message
    result = dict(message["result"])

    def text(value: str) -> str:
        edited = _json_text(value, on_json) if on_json is not None else None
        return edited if edited is not None else on_text(value) if on_text is not None else value

    result["content"] = [
        {**c, "text": text(c["text"])} if isinstance(c, dict) and isinstance(c.get("text"), str) else c
        for c in result.get("content") or []
    ]
    structured = result.get("structuredContent")
    if structured is not None:
        if on_json is not None:
            result["structuredContent"] = on_json(structured)
        elif on_text is not None:
            result["structuredContent"] = map_strings(structured, on_text)
    return {**message, "result": result}


def pad(data: Any, size_bytes: int, filler: str) -> Any:
    """Grow a JSON value (or MCP result, both its text and its structured content) by about size_bytes of filler."""
    blob = (filler * (size_bytes // len(filler) + 1))[:size_bytes]
    if isinstance(data, dict) and isinstance(data.get("result"), dict) and "content" in data["result"]:
        result = {**data["result"], "content": [*data["result"]["content"], {"type": "text", "text": blob}]}
        if isinstance(result.get("structuredContent"), dict):
            result["structuredContent"] = {**result["structuredContent"], "notes": blob}
        return {**data, "result": result}
    if isinstance(data, dict):
        return {**data, "notes": blob}
    if isinstance(data, list):
        return [*data, blob]
    return data


def edit_json_or_text(body: bytes, on_json: Callable[[Any], Any], on_text: TextFn) -> bytes:
    """Apply on_json to a JSON body, or on_text to any other (UTF-8) body."""
    try:
        data = json.loads(body)
    except ValueError:
        return on_text(body.decode("utf-8", "replace")).encode()
    return json.dumps(on_json(data)).encode()


def _poison(messages: list[Any], payload: str, strategy: str, content_key: str = "content") -> list[Any]:
    users = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"]
    if strategy == "history" or not users:
        at = next((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") != "system"), 0)
        remembered = [{"role": "user", content_key: payload}, {"role": "assistant", content_key: "Understood."}]
        return messages[:at] + remembered + messages[at:]
    last = dict(messages[users[-1]])
    text = last.get(content_key)
    if isinstance(text, str):
        last[content_key] = {"prepend": f"{payload}\n\n{text}", "append": f"{text}\n\n{payload}"}.get(strategy, payload)
    else:
        blocks = list(text or [])
        block = {"type": "text", "text": payload}
        last[content_key] = (
            [block] if strategy == "replace" else ([block, *blocks] if strategy == "prepend" else [*blocks, block])
        )
    return [*messages[: users[-1]], last, *messages[users[-1] + 1 :]]


def poison_request(body: Any, payload: str, strategy: str) -> Any:
    """Plant payload in the conversation an agent sends its LLM (chat messages or responses input)."""
    if isinstance(body, dict) and isinstance(body.get("messages"), list):
        return {**body, "messages": _poison(body["messages"], payload, strategy)}
    if isinstance(body, dict) and isinstance(body.get("input"), list):
        return {**body, "input": _poison(body["input"], payload, strategy)}
    if isinstance(body, dict) and isinstance(body.get("input"), str):
        text = body["input"]
        joined = {"prepend": f"{payload}\n\n{text}", "append": f"{text}\n\n{payload}", "replace": payload}
        return {**body, "input": joined.get(strategy, f"{payload}\n\n{text}")}
    return body


def same_content(before: bytes, after: bytes) -> bool:
    """Equal bytes, or two JSON documents with equal values (a re-serialization changes nothing)."""
    if before == after:
        return True
    try:
        return bool(json.loads(before) == json.loads(after))
    except ValueError:
        return False
