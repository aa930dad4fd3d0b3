from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.providers import provider


class ErrorFault(Fault):
    """Answer for the upstream with an HTTP error (provider-shaped JSON for LLM targets)."""

    mode: Literal["error"]
    error_code: int = Field(503, ge=400, le=599)
    message: str | None = Field(None, description="Error text; None = the status's standard text.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra headers, e.g. Retry-After.")

    def act(self, call: Call, rng: Random) -> Action:
        return Action(reply=provider(call.api).error(self.error_code, self.message, self.headers))
