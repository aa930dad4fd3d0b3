from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call


class TruncatedFault(Fault):
    """Forward the upstream's answer cut to keep_fraction of its body, Content-Length still the full size."""

    mode: Literal["truncated"]
    keep_fraction: float = Field(0.5, ge=0.0, lt=1.0)

    def act(self, call: Call, rng: Random) -> Action:
        return Action(rewrite_body=lambda body: body[: int(len(body) * self.keep_fraction)], keep_length=True)
