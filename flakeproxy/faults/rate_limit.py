from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.provider_errors import should_retry_header
from flakeproxy.wire.providers import provider


class RateLimitFault(Fault):
    """Answer 429 with a Retry-After header of retry_after_s seconds (0 = retry at once).

    OpenAI targets also get `retry-after-ms` and OpenAI's "Rate limit reached for ... (RPM)" text.
    """

    mode: Literal["rate_limit"]
    retry_after_s: int = Field(1, ge=0)
    message: str | None = None
    should_retry: bool | None = Field(
        None, description="Send x-should-retry: true/false, which both SDKs obey over the status; None = not sent."
    )

    def act(self, call: Call, rng: Random) -> Action:
        headers = {"retry-after": str(self.retry_after_s), **should_retry_header(self.should_retry)}
        return Action(reply=provider(call.api).error(429, self.message, headers))
