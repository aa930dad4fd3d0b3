from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class McpJsonRpcErrorFault(Fault):
    """Answer an MCP tools/call with a JSON-RPC error object (code, message)."""

    mode: Literal["jsonrpc_error"]
    code: int = Field(-32603, description="-32603 internal error, -32602 invalid params, ...")
    message: str = "Internal error"
