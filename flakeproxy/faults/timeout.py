from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.providers import provider


class TimeoutFault(Fault):
    """Hang for delay_ms without reaching the upstream, then close the connection or answer 504."""

    mode: Literal["timeout"]
    delay_ms: int = Field(30000, ge=0)
    end: Literal["close", "gateway_timeout"] = "close"

    def act(self, call: Call, rng: Random) -> Action:
        if self.end == "close":
            return Action(delay_ms=self.delay_ms, close=True)
        return Action(delay_ms=self.delay_ms, reply=provider(call.api).error(504, "Gateway timeout"))
