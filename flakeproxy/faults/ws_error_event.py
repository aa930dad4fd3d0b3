from __future__ import annotations

from random import Random
from typing import Literal

from flakeproxy.faults.ws_common import WsFault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.websocket import WsInject, error_event, ws_api


class WsErrorEventFault(WsFault):
    """Send the provider's own `error` event ahead of the server message it triggers on; the socket stays open.

    Realtime's shape on /v1/realtime, the Responses stream's on other paths.
    """

    mode: Literal["ws_error_event"]
    error_type: str = "server_error"
    code: str | None = None
    message: str = "The server had an error while processing your request. Sorry about that!"

    def act(self, call: Call, rng: Random) -> Action:
        event = error_event(ws_api(call.path), self.error_type, self.code, self.message)
        return Action(websocket=lambda: WsInject(trigger=self.trigger(), events=(event,)))
