from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.mcp import jsonrpc_error_reply


class McpJsonRpcErrorFault(Fault):
    """Answer an MCP tools/call with a JSON-RPC error object (code, message)."""

    mode: Literal["jsonrpc_error"]
    code: int = Field(-32603, description="-32603 internal error, -32602 invalid params, ...")
    message: str = "Internal error"

    def act(self, call: Call, rng: Random) -> Action:
        return Action(reply=jsonrpc_error_reply(call.headers, call.body, self.code, self.message))
