from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.config.base import Milliseconds
from flakeproxy.faults.ws_common import WsFault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.websocket import WsHold


class WsStallFault(WsFault):
    """Hold the server's messages for stall_ms at the message it triggers on (those behind it wait too), once."""

    mode: Literal["ws_stall"]
    stall_ms: Milliseconds = Field(5000, description="How long the server's messages are held, once.")

    def act(self, call: Call, rng: Random) -> Action:
        return Action(websocket=lambda: WsHold(trigger=self.trigger(), delay_ms=self.stall_ms, once=True))
