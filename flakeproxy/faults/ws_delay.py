from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.config.base import Milliseconds
from flakeproxy.faults.ws_common import WsFault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.websocket import WsHold


class WsDelayFault(WsFault):
    """Delay every matching server message by delay_ms (0: no delay), from the trigger on."""

    mode: Literal["ws_delay"]
    delay_ms: Milliseconds = Field(200, description="The delay before each matching server message.")

    def act(self, call: Call, rng: Random) -> Action:
        return Action(websocket=lambda: WsHold(trigger=self.trigger(), delay_ms=self.delay_ms, once=False))
