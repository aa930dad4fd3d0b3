from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.providers import llm_provider
from flakeproxy.wire.streams import StreamCut


class StreamCutFault(Fault):
    """End an LLM SSE stream cleanly after after_events events, with no [DONE] / message_stop (0 = none)."""

    mode: Literal["stream_cut"]
    after_events: int = Field(3, ge=0)

    def act(self, call: Call, rng: Random) -> Action:
        terminal = llm_provider(call.api).is_terminal
        return Action(stream=lambda: StreamCut(self.after_events, terminal))
