from __future__ import annotations

from random import Random
from typing import Literal

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.llm_edits import llm_text_action
from flakeproxy.wire.text import StreamedArgsCut, corrupt_arguments


class ToolCallCorruptionFault(Fault):
    """Break the LLM's tool calls: cut the JSON arguments to one prefix, make them invalid, or rename the tool.

    On a stream, truncate_json cuts the joined argument pieces at one point and drops the rest (as a real
    cut answer), so an SDK that parses partial JSON sees a prefix, not garbage.
    """

    mode: Literal["tool_call_corruption"]
    corruption: Literal["truncate_json", "invalid_json", "wrong_name"] = "truncate_json"

    def act(self, call: Call, rng: Random) -> Action:
        def tool(name: str, arguments: str) -> tuple[str, str]:
            if self.corruption == "wrong_name":
                return ("no_such_tool" if name else name), arguments
            return name, corrupt_arguments(self.corruption, arguments) if arguments else arguments

        per_stream = StreamedArgsCut if self.corruption == "truncate_json" else None
        return llm_text_action(call.api, tool=tool, tool_per_stream=per_stream)
