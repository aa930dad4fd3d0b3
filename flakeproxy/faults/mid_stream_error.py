from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.providers import llm_provider
from flakeproxy.wire.streams import MidStreamError


class MidStreamErrorFault(Fault):
    """Send a provider error event inside a 200 SSE stream after after_events events, then end it."""

    mode: Literal["mid_stream_error"]
    after_events: int = Field(3, ge=0)
    error_type: str = Field("overloaded_error", description="The error's type in the provider's JSON.")
    message: str = "Overloaded"

    def act(self, call: Call, rng: Random) -> Action:
        event = llm_provider(call.api).stream_error(self.message, self.error_type)
        return Action(stream=lambda: MidStreamError(self.after_events, event))
