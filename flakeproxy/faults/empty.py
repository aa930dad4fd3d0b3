from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action, Reply
from flakeproxy.wire.call import Call
from flakeproxy.wire.llm_edits import llm_text_action


class EmptyFault(Fault):
    """Answer with an empty body (LLM targets: a well-formed reply whose content is empty)."""

    mode: Literal["empty"]
    status: int = Field(200, ge=100, le=599)

    def act(self, call: Call, rng: Random) -> Action:
        if call.api:
            return llm_text_action(call.api, text=lambda _: "")
        return Action(reply=Reply(self.status, b"", {"content-type": "application/json"}))
