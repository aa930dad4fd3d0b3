from __future__ import annotations

from random import Random
from typing import Literal

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.mcp import is_error_reply


class McpIsErrorFault(Fault):
    """Answer an MCP tools/call with a result whose isError is true and whose text is message."""

    mode: Literal["is_error"]
    message: str = "Tool execution failed"

    def act(self, call: Call, rng: Random) -> Action:
        return Action(reply=is_error_reply(call.headers, call.body, self.message))
