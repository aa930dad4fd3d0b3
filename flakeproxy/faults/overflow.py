from __future__ import annotations

from random import Random
from typing import Any, Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.json_edit import edit_json_or_text, pad
from flakeproxy.wire.streams import MapJsonEvents


class OverflowAttack(Fault):
    """Pad a tool's answer to size_bytes with filler, to push the agent's context past its limits."""

    type: Literal["overflow"]
    size_bytes: int = Field(200_000, ge=1)
    filler: str = Field("lorem ipsum ", min_length=1)

    def marker(self) -> str:
        """The filler's first 48 characters as they are padded in (the start of every padding)."""
        return (self.filler * (48 // len(self.filler) + 1))[: min(48, self.size_bytes)]

    def act(self, call: Call, rng: Random) -> Action:
        def grow(data: Any) -> Any:
            return pad(data, self.size_bytes, self.filler)

        def grow_text(text: str) -> str:
            return text + (self.filler * (self.size_bytes // len(self.filler) + 1))[: self.size_bytes]

        return Action(
            rewrite_body=lambda body: edit_json_or_text(body, grow, grow_text), stream=lambda: MapJsonEvents(grow)
        )
