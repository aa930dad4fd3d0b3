from __future__ import annotations

from typing import Literal

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, check


class OutputNotEmpty(Invariant):
    """The answer has at least one non-blank character."""

    type: Literal["output_not_empty"]

    def evaluate(self, obs: Observation) -> Verdict:
        text = obs.text or ""
        return check(bool(text.strip()), f"{len(text)} characters", "the answer is empty", length=len(text))
