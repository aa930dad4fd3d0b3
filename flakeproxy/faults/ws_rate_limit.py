from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.ws_common import WsFault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.websocket import WsInject, error_event, rate_limits_event, ws_api


class WsRateLimitFault(WsFault):
    """Send the provider's rate limit events ahead of the message it triggers on; the socket stays open.

    Realtime: `rate_limits.updated` with nothing remaining, then an `error` event with code rate_limit_exceeded;
    Responses over WebSocket: the error event. By default at the first response.created; reset_s: when the
    limits reset (0: at once).
    """

    mode: Literal["ws_rate_limit"]
    at_event: str | None = Field("response.created", description="The server event it answers in place of.")
    reset_s: float = Field(1.0, ge=0, description="The seconds the rate_limits event says the limit resets in.")

    def act(self, call: Call, rng: Random) -> Action:
        api = ws_api(call.path)
        text = f"Rate limit reached for requests. Please try again in {self.reset_s:g}s."
        error = error_event(api, "rate_limit_error", "rate_limit_exceeded", text)
        events = (rate_limits_event(self.reset_s), error) if api == "realtime" else (error,)
        return Action(websocket=lambda: WsInject(trigger=self.trigger(), events=events, label="rate limit"))
