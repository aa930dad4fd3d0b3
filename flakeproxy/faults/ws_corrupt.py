from __future__ import annotations

from random import Random
from typing import Literal

from flakeproxy.faults.ws_common import WsFault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.websocket import WsCorrupt


class WsCorruptFault(WsFault):
    """Replace the server message it triggers on with malformed JSON (its first half, cut inside a string)."""

    mode: Literal["ws_corrupt"]

    def act(self, call: Call, rng: Random) -> Action:
        return Action(websocket=lambda: WsCorrupt(trigger=self.trigger()))
