from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.provider_errors import should_retry_header
from flakeproxy.wire.providers import provider


class ErrorFault(Fault):
    """Answer for the upstream with an HTTP error (provider-shaped JSON for LLM targets).

    LLM targets also get the headers the provider sends: OpenAI `x-request-id`, `x-ratelimit-*`; Anthropic
    `request-id` (also the body's `request_id`), `anthropic-ratelimit-*`.
    """

    mode: Literal["error"]
    error_code: int = Field(503, ge=400, le=599)
    message: str | None = Field(None, description="Error text; None = the status's standard text.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra headers, e.g. Retry-After.")
    should_retry: bool | None = Field(
        None, description="Send x-should-retry: true/false, which both SDKs obey over the status; None = not sent."
    )

    def act(self, call: Call, rng: Random) -> Action:
        headers = {**should_retry_header(self.should_retry), **self.headers}
        return Action(reply=provider(call.api).error(self.error_code, self.message, headers))
