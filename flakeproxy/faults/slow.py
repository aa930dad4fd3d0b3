from __future__ import annotations

from random import Random
from typing import Literal

from flakeproxy.faults.base import Delay
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call


class SlowFault(Delay):
    """Delay the call by delay_ms (+ jitter) and then forward it; on LLM streams this is time to first token."""

    mode: Literal["slow", "latency"]

    def act(self, call: Call, rng: Random) -> Action:
        return Action(delay_ms=self.delay_ms + (rng.randint(0, self.jitter_ms) if self.jitter_ms else 0))
