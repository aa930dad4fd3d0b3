"""One journal entry as a span in the agent's own trace: a child of the span whose `traceparent` the request
carried (else of the episode's span), from the request's start to the moment the agent had the answer."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from flakeproxy.config.proxy import Target
from flakeproxy.telemetry.detect import call_context
from flakeproxy.telemetry.out import SpanSpec, clean, nanos, span_id_for
from flakeproxy.wire.record import read_fault
from flakeproxy.wire.usage import Usage, read_body

#: gen_ai.provider.name per target api
PROVIDERS = {"openai": "openai", "openai-responses": "openai", "anthropic": "anthropic", "gemini": "gcp.gemini"}
Entry = dict[str, Any]


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) and text.strip() else None
    except ValueError:
        return None


def _messages(body: Any) -> list[dict[str, Any]]:
    """JSON-RPC messages in a body: one JSON message or a batch, or the `data:` lines of an SSE stream."""
    data = _json(body)
    if data is None and isinstance(body, str):
        lines = (line[5:].strip() for line in body.splitlines() if line.startswith("data:"))
        data = [m for m in (_json(line) for line in lines) if m is not None]
    items = data if isinstance(data, list) else [data]
    return [m for m in items if isinstance(m, dict) and m.get("jsonrpc") == "2.0"]


def _usage(entry: Entry, api: str) -> Usage | None:
    if entry.get("usage") is not None:
        return Usage.model_validate(entry["usage"])
    if entry.get("streamed") or not entry.get("complete", True) or not entry.get("response_body"):
        return None
    return read_body(api, entry["response_body"], int(entry.get("status") or 200))  # type: ignore[arg-type]


def _llm(entry: Entry, api: str) -> tuple[str, dict[str, Any]]:
    request = _json(entry.get("request_body")) or {}
    model = request.get("model") if isinstance(request, dict) else None
    if model is None and api == "gemini":  # .../models/{model}:generateContent
        path = urlsplit(str(entry.get("url", ""))).path
        model = path.rsplit("/models/", 1)[-1].split(":", 1)[0] if "/models/" in path else None
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDERS.get(api, api),
        "gen_ai.request.model": model,
    }
    usage = _usage(entry, api)
    if usage is not None and not usage.unknown:
        attrs |= {"gen_ai.usage.input_tokens": usage.input_tokens, "gen_ai.usage.output_tokens": usage.output_tokens}
        attrs["gen_ai.response.model"] = usage.model
    return (f"chat {model}" if model else "chat"), attrs


def _mcp(entry: Entry, request: dict[str, Any]) -> tuple[str, dict[str, Any], str | None]:
    """(name, attributes, error.type) of an MCP request, by its JSON-RPC message and the answer to it."""
    method = str(request.get("method"))
    params: dict[str, Any] = request["params"] if isinstance(request.get("params"), dict) else {}
    tool = params.get("name") if method == "tools/call" else None
    headers = {str(k).lower(): v for k, v in (entry.get("request_headers") or {}).items()}
    attrs: dict[str, Any] = {
        "mcp.method.name": method,
        "gen_ai.operation.name": "execute_tool" if method == "tools/call" else None,
        "gen_ai.tool.name": tool,
        "jsonrpc.request.id": str(request["id"]) if request.get("id") is not None else None,
        "mcp.session.id": headers.get("mcp-session-id"),
    }
    answers = [m for m in _messages(entry.get("response_body")) if m.get("id") == request.get("id")]
    error_type = None
    if answers and isinstance(answers[-1].get("error"), dict):
        code = answers[-1]["error"].get("code")
        attrs["rpc.response.status_code"] = str(code)
        error_type = str(code)
    elif answers and isinstance(answers[-1].get("result"), dict) and answers[-1]["result"].get("isError") is True:
        error_type = "tool_error"
    return (f"{method} {tool}" if tool else method), attrs, error_type


def _operation(entry: Entry, targets: Mapping[str, Target]) -> tuple[str, dict[str, Any], str | None]:
    """The span's name, its GenAI or MCP attributes, and an error.type the body says (MCP)."""
    names = [t for t in entry.get("targets") or [] if t in targets]
    llm = next((targets[t].api for t in names if targets[t].api), None)
    if llm is not None:
        return (*_llm(entry, llm), None)
    mcp = _messages(entry.get("request_body"))
    if mcp and mcp[0].get("method"):
        return _mcp(entry, mcp[0])
    if names:
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": names[0], "gen_ai.tool.type": "extension"}
        return f"execute_tool {names[0]}", attrs, None
    return str(entry.get("method", "HTTP")), {}, None


def _http(entry: Entry) -> dict[str, Any]:
    url = urlsplit(str(entry.get("url", "")))
    return {
        "http.request.method": entry.get("method"),
        "url.full": entry.get("url"),
        "server.address": url.hostname,
        "server.port": url.port or (443 if url.scheme == "https" else 80),
        "http.response.status_code": entry.get("status"),
    }


def _fault(entry: Entry) -> dict[str, Any]:
    record = read_fault(entry.get("fault"))
    if record is None:
        return {}
    return {
        "flakeproxy.fault.mode": record.kind,
        "flakeproxy.fault.section": record.section,
        "flakeproxy.fault.applied": record.applied,
        "flakeproxy.fault.effect": record.describe(),
    }


def _error(entry: Entry, said: str | None) -> tuple[str | None, str]:
    """(error.type, status message): the MCP error, an HTTP status >= 400, or no answer at all."""
    status = entry.get("status")
    if said is not None:
        return said, f"MCP error {said}"
    if isinstance(status, int) and status >= 400:
        return str(status), f"HTTP {status}"
    if entry.get("error"):
        record = read_fault(entry.get("fault"))
        return (record.kind if record is not None and record.applied else "_OTHER"), str(entry["error"])[:500]
    return None, ""


def call_span(
    entry: Entry, episode: str, scenario: str | None, root: tuple[str, str], targets: Mapping[str, Target]
) -> SpanSpec:
    """The span of one proxied call of episode `episode`; `root` is the episode's (trace id, span id)."""
    trace_id, parent = call_context(entry) or root
    start = float(entry.get("started_at") or 0.0)
    name, attrs, said = _operation(entry, targets)
    error_type, message = _error(entry, said)
    attributes = {
        **_http(entry),
        **attrs,
        "error.type": error_type,
        **_fault(entry),
        "flakeproxy.scenario": scenario,
        "flakeproxy.episode.id": episode,
        "flakeproxy.call.seq": entry.get("seq"),
    }
    return SpanSpec(
        trace_id=trace_id,
        span_id=span_id_for(trace_id, episode, entry.get("seq"), start),
        parent_span_id=parent,
        name=name,
        start_ns=nanos(start),
        end_ns=nanos(start) + round(float(entry.get("latency_ms") or 0.0) * 1e6),
        attributes=clean(attributes),
        status="error" if error_type else "unset",
        status_message=message if error_type else "",
    )
