from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.llm_edits import truncate_action


class TruncatedResponseFault(Fault):
    """Cut the LLM's content to max_tokens words with finish_reason length / stop_reason max_tokens (0 = empty).

    JSON and SSE answers end alike, at the last word kept. A cut stream's made-up end carries no usage (no OpenAI
    usage chunk, even with include_usage): the fault cannot know what the provider billed, so the call's usage is
    unknown. An answer with no text to cut (a tool call only) passes as it came: not applied.
    """

    mode: Literal["truncated_response"]
    max_tokens: int = Field(10, ge=0)

    def act(self, call: Call, rng: Random) -> Action:
        return truncate_action(call.api, self.max_tokens)
