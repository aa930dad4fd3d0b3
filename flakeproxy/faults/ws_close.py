from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.ws_common import CloseCode, WsFault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.websocket import WsClose


class WsCloseFault(WsFault):
    """Close a WebSocket with `code` and `reason` in place of the server message it triggers on.

    1011 is a server error; 1006 cannot be sent (a client reports it for a connection lost without a close frame).
    """

    mode: Literal["ws_close"]
    code: CloseCode = Field(1011, description="The close code (1011: a server error).")
    reason: str = Field("", max_length=120, description="The close reason the agent sees (at most 120 bytes).")

    def act(self, call: Call, rng: Random) -> Action:
        return Action(websocket=lambda: WsClose(trigger=self.trigger(), code=self.code, reason=self.reason))
