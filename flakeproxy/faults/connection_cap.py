from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.config.base import Milliseconds
from flakeproxy.faults.base import Fault
from flakeproxy.faults.ws_common import CloseCode
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.websocket import WsCap, error_event, ws_api

#: The error code the provider sends before it ends a connection at its limit (Realtime's session limit,
#: Responses over WebSocket's connection limit).
CAP_CODES = {"realtime": "session_expired", "responses": "websocket_connection_limit_reached"}


class ConnectionCapFault(Fault):
    """Close a WebSocket after_ms after it opened, as a provider's connection cap does (0: at once).

    The provider's `error` event first (session_expired, websocket_connection_limit_reached), then a close frame
    with `code`.
    """

    mode: Literal["connection_cap"]
    after_ms: Milliseconds = Field(60_000, description="When the connection is closed, after it opened (0: at once).")
    code: CloseCode = Field(1000, description="The close code the provider closes with.")
    reason: str = Field("", max_length=120, description="The close reason the agent sees (at most 120 bytes).")

    def act(self, call: Call, rng: Random) -> Action:
        api = ws_api(call.path)
        message = "Your session hit the maximum duration." if api == "realtime" else "Connection limit reached."
        event = error_event(api, "invalid_request_error", CAP_CODES[api], message)
        return Action(
            websocket=lambda: WsCap(timer_ms=self.after_ms, events=(event,), code=self.code, reason=self.reason)
        )
