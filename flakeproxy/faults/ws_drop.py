from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.ws_common import WsFault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.websocket import WsDrop


class WsDropFault(WsFault):
    """Drop the matching server messages (at_event, e.g. response.done), at most `count` (None: all of them)."""

    mode: Literal["ws_drop"]
    count: int | None = Field(None, ge=1, description="How many matching messages to drop (none: every one).")

    def act(self, call: Call, rng: Random) -> Action:
        return Action(websocket=lambda: WsDrop(trigger=self.trigger(), count=self.count))
