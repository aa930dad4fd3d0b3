from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.providers import OpenAIResponses, llm_provider
from flakeproxy.wire.streams import MidStreamError


class MidStreamErrorFault(Fault):
    """Send a provider error event inside a 200 SSE stream after after_events events, then end it.

    By default the error the API sends: `server_error` (OpenAI chat; the code of the Responses `error` event, or
    of a final `response.failed` with `responses_event: response.failed`), `overloaded_error` (Anthropic). A
    stream that reaches its own end ([DONE], message_stop) first gets none: no provider errs after its end.
    """

    mode: Literal["mid_stream_error"]
    after_events: int = Field(3, ge=0)
    error_type: str | None = Field(
        None,
        description="The error's type in the provider's JSON; None = what the API sends: server_error (OpenAI "
        "chat; the code of the Responses error event), overloaded_error (Anthropic).",
    )
    message: str | None = Field(None, description="None = the API's usual text for that error.")
    responses_event: Literal["error", "response.failed"] = Field(
        "error", description="OpenAI Responses only: fail with an `error` event or a final `response.failed`."
    )

    def act(self, call: Call, rng: Random) -> Action:
        shape = llm_provider(call.api)
        if self.responses_event == "response.failed" and isinstance(shape, OpenAIResponses):
            event = shape.stream_failed(self.message, self.error_type)
        else:
            event = shape.stream_error(self.message, self.error_type)
        return Action(stream=lambda: MidStreamError(self.after_events, event, shape.is_terminal))
