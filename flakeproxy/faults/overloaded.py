from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.providers import provider


class OverloadedFault(Fault):
    """Answer as an overloaded provider: 529 overloaded_error (Anthropic) or 503 (OpenAI)."""

    mode: Literal["overloaded"]
    retry_after_s: int | None = Field(None, ge=0, description="None = no Retry-After header.")

    def act(self, call: Call, rng: Random) -> Action:
        status = 529 if call.api == "anthropic" else 503
        headers = {} if self.retry_after_s is None else {"retry-after": str(self.retry_after_s)}
        return Action(reply=provider(call.api).error(status, "Overloaded", headers))
