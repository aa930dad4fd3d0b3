from __future__ import annotations

import re
from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.provider_errors import should_retry_header
from flakeproxy.wire.providers import provider

#: a request's "model" field, looked for in the head of its body only (a large body's is not read through)
_MODEL = re.compile(rb'"model"\s*:\s*"([A-Za-z0-9._:/@-]{1,100})"')


def requested_model(body: bytes) -> str | None:
    """The model a JSON LLM request names (OpenAI's 429 text says the model it was for: a trial's said gpt-4o to a
    gpt-4o-mini request), or None."""
    found = _MODEL.search(body[:65536])
    return found.group(1).decode() if found else None


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
        return Action(reply=provider(call.api).error(429, self.message, headers, model=requested_model(call.body)))
