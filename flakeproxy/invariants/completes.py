from __future__ import annotations

from typing import ClassVar, Literal

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge, check


class Completes(Invariant):
    """The agent answered at all: no timeout, no transport error, no unparseable reply.

    An answer a wrong agent.response_path could not read (it read no calm answer either) is ERROR: a config
    problem, not the agent's (flakeproxy.judging.calm_checks)."""

    type: Literal["completes"]
    needs_answer: ClassVar[bool] = False

    def evaluate(self, obs: Observation) -> Verdict:
        if obs.unread is not None:
            return cannot_judge(f"the agent answered, but its answer could not be read: {obs.unread}", error=obs.error)
        return check(
            obs.error is None and obs.text is not None,
            "the agent answered",
            f"the agent did not answer: {obs.error}",
            error=obs.error,
        )
