from __future__ import annotations

from random import Random
from typing import Literal

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action, Reply
from flakeproxy.wire.call import Call


class MalformedFault(Fault):
    """Answer 200 with a body that claims to be JSON and is not."""

    mode: Literal["malformed"]
    body: str = "{ corrupted ] invalid json"

    def act(self, call: Call, rng: Random) -> Action:
        return Action(reply=Reply(200, self.body.encode(), {"content-type": "application/json"}))
