from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.llm_edits import llm_text_action
from flakeproxy.wire.text import drift


class ResponseDriftFault(Fault):
    """Change how the LLM's answer reads, as a model upgrade would (drift_type says how)."""

    mode: Literal["response_drift"]
    drift_type: Literal["json_field_rename", "format_change", "verbosity_shift", "refusal_rephrase", "tone_shift"] = (
        "json_field_rename"
    )
    direction: Literal["expand", "compress"] = "compress"
    factor: float = Field(2.0, gt=0, description="verbosity_shift: how much longer or shorter.")

    def act(self, call: Call, rng: Random) -> Action:
        return llm_text_action(call.api, text=drift(self.drift_type, self.direction, self.factor))
