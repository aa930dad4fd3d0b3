"""The spans flakeproxy exports, as plain models (the runner turns them into OpenTelemetry SDK spans): what one
proxied call looked like to the proxy, placed in the agent's own trace, and the episode with its verdicts.

Names and attributes follow the OpenTelemetry GenAI semantic conventions, pinned at SCHEMA_URL (the last core
release that defines them before they moved to semantic-conventions-genai, which has not released yet): an LLM
call is a `chat {model}` span, a tool API call `execute_tool {target}`, an MCP request `{mcp.method.name}
{tool}`, anything else an HTTP client span `{method}`; each carries `error.type` when it failed and, when a
fault was decided on it, `flakeproxy.fault.*`.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_URL = "https://opentelemetry.io/schemas/1.41.0"
Attr = str | bool | int | float | list[str]
Status = Literal["unset", "ok", "error"]


class EventSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    time_ns: int
    attributes: dict[str, Attr] = Field(default_factory=dict)


class SpanSpec(BaseModel):
    """One span to export, with its ids and times fixed (hex ids, Unix nanoseconds)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: Literal["client", "internal"] = "client"
    start_ns: int
    end_ns: int
    attributes: dict[str, Attr] = Field(default_factory=dict)
    status: Status = "unset"
    status_message: str = ""
    events: list[EventSpec] = Field(default_factory=list)


def span_id_for(*parts: Any) -> str:
    """A stable, non-zero span id for these parts (the same call exported twice keeps its id)."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()
    return digest[:16] if int(digest[:16], 16) else "1".rjust(16, "0")


def nanos(seconds: float) -> int:
    return round(seconds * 1e9)


def clean(attributes: dict[str, Any]) -> dict[str, Attr]:
    """Attributes as OpenTelemetry takes them: None dropped, lists as lists of strings, other values as text."""
    out: dict[str, Attr] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, str | bool | int | float):
            out[key] = value
        elif isinstance(value, list | tuple):
            out[key] = [str(v) for v in value]
        else:
            out[key] = str(value)
    return out
