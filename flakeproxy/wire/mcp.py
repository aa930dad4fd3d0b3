"""MCP over Streamable HTTP: which tool a request calls, and JSON-RPC answers made for it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from flakeproxy.wire.action import Reply, json_reply


def _message(body: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, list):
        data = next((m for m in data if isinstance(m, dict) and m.get("method") == "tools/call"), None)
    return data if isinstance(data, dict) else None


def called_tool(headers: Mapping[str, str], body: bytes) -> str | None:
    """The tool a tools/call request names (Mcp-Name header of 2026-07-28 clients, else params.name)."""
    if headers.get("mcp-method") == "tools/call" and headers.get("mcp-name"):
        return headers["mcp-name"]
    message = _message(body)
    if message and message.get("method") == "tools/call":
        name = (message.get("params") or {}).get("name")
        return name if isinstance(name, str) else None
    return None


def request_id(body: bytes) -> Any:
    message = _message(body)
    return message.get("id") if message else None


def _reply(headers: Mapping[str, str], payload: dict[str, Any]) -> Reply:
    session = {"mcp-session-id": headers["mcp-session-id"]} if "mcp-session-id" in headers else {}
    return json_reply(200, payload, session)


def is_error_reply(headers: Mapping[str, str], body: bytes, message: str) -> Reply:
    """A tools/call result the model sees as a failed tool (isError: true)."""
    # resultType is required from protocol 2026-07-28 on; older revisions allow the extra key
    result = {"content": [{"type": "text", "text": message}], "isError": True, "resultType": "complete"}
    return _reply(headers, {"jsonrpc": "2.0", "id": request_id(body), "result": result})


def jsonrpc_error_reply(headers: Mapping[str, str], body: bytes, code: int, message: str) -> Reply:
    """A protocol-level JSON-RPC error answer."""
    return _reply(headers, {"jsonrpc": "2.0", "id": request_id(body), "error": {"code": code, "message": message}})


#: The trace-context keys an MCP request may carry in params._meta (SEP-414), as in HTTP headers.
TRACE_KEYS = ("traceparent", "tracestate", "baggage")


def trace_meta(body: bytes) -> dict[str, str]:
    """The W3C trace context an MCP request carries in `params._meta` (SEP-414: `traceparent`, `tracestate`,
    `baggage`), from the first message of a batch that has any; {} for anything else."""
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    for message in data if isinstance(data, list) else [data]:
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict):
            found = {k: meta[k] for k in TRACE_KEYS if isinstance(meta.get(k), str)}
            if found:
                return found
    return {}
