from __future__ import annotations

from typing import ClassVar, Literal

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, check


class Completes(Invariant):
    """The agent answered at all: no timeout, no transport error, no unparseable reply."""

    type: Literal["completes"]
    needs_answer: ClassVar[bool] = False

    def evaluate(self, obs: Observation) -> Verdict:
        return check(
            obs.error is None and obs.text is not None,
            "the agent answered",
            f"the agent did not answer: {obs.error}",
            error=obs.error,
        )
