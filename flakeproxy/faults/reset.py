from __future__ import annotations

from random import Random
from typing import Literal

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call


class ResetFault(Fault):
    """Close the client connection without any response; the upstream is not called."""

    mode: Literal["reset"]

    def act(self, call: Call, rng: Random) -> Action:
        return Action(close=True)
