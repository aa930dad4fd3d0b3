from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.json_edit import edit_json_or_text, poison_request


class MemoryPoisoningAttack(Fault):
    """Plant payload in the conversation the agent sends its LLM (as a prior message or in the last one)."""

    type: Literal["memory_poisoning"]
    payload: str = Field(min_length=1)
    strategy: Literal["prepend", "append", "replace", "history"] = "history"

    def act(self, call: Call, rng: Random) -> Action:
        def poison(body: bytes) -> bytes:
            return edit_json_or_text(body, lambda d: poison_request(d, self.payload, self.strategy), lambda t: t)

        return Action(rewrite_request=poison)
