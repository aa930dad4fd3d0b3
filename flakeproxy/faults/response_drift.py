from __future__ import annotations

from random import Random
from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call
from flakeproxy.wire.llm_edits import llm_text_action
from flakeproxy.wire.text import StreamDrift, drift


class ResponseDriftFault(Fault):
    """Change how the LLM's answer reads, as a model upgrade would (drift_type says how), once per answer.

    tone_shift: a casual opener and contractions; format_change: bullets; refusal_rephrase: softer refusals;
    json_field_rename: keys get _v2; verbosity_shift: expand repeats the answer (factor times; a stream repeats
    each sentence), compress keeps 1/factor of it (a stream, whose length is unknown, keeps stream_words words).
    """

    mode: Literal["response_drift"]
    drift_type: Literal["json_field_rename", "format_change", "verbosity_shift", "refusal_rephrase", "tone_shift"] = (
        "json_field_rename"
    )
    direction: Literal["expand", "compress"] = "compress"
    factor: float = Field(2.0, gt=1, description="verbosity_shift: how much longer or shorter (2 = double or half).")
    stream_words: int = Field(20, ge=1, description="verbosity_shift compress on a stream: the words kept.")

    def act(self, call: Call, rng: Random) -> Action:
        return llm_text_action(
            call.api,
            text=drift(self.drift_type, self.direction, self.factor),
            per_stream=lambda: StreamDrift(self.drift_type, self.direction, self.factor, self.stream_words),
        )
