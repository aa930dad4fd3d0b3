from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.provider_errors import should_retry_header
from flakeproxy.wire.providers import provider


class OverloadedFault(Fault):
    """Answer as an overloaded provider: 529 overloaded_error (Anthropic) or 503 (OpenAI).

    OpenAI's 503 is a `server_error` with `code: null`, as OpenAI sends it.
    """

    mode: Literal["overloaded"]
    retry_after_s: int | None = Field(None, ge=0, description="None = no Retry-After header.")
    should_retry: bool | None = Field(
        None, description="Send x-should-retry: true/false, which both SDKs obey over the status; None = not sent."
    )

    def act(self, call: Call, rng: Random) -> Action:
        status = 529 if call.api == "anthropic" else 503
        headers = {} if self.retry_after_s is None else {"retry-after": str(self.retry_after_s)}
        headers.update(should_retry_header(self.should_retry))
        return Action(reply=provider(call.api).error(status, None, headers))
