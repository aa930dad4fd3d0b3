from __future__ import annotations

from random import Random
from typing import Literal

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.providers import provider


class RequestTooLargeFault(Fault):
    """Refuse the request body as too large: HTTP 413 (Anthropic `request_too_large`), not retried by the SDKs."""

    mode: Literal["request_too_large"]

    def act(self, call: Call, rng: Random) -> Action:
        return Action(reply=provider(call.api).error(413, None))
