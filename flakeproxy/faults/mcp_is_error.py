from __future__ import annotations

from typing import Literal

from flakeproxy.faults.base import Fault


class McpIsErrorFault(Fault):
    """Answer an MCP tools/call with a result whose isError is true and whose text is message."""

    mode: Literal["is_error"]
    message: str = "Tool execution failed"
