from __future__ import annotations

from typing import Literal

from flakeproxy.faults.base import Fault


class ToolCallCorruptionFault(Fault):
    """Break the JSON arguments of the LLM's tool calls (cut them, or make them invalid)."""

    mode: Literal["tool_call_corruption"]
    corruption: Literal["truncate_json", "invalid_json", "wrong_name"] = "truncate_json"
