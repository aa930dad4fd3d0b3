from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.verdict import Observation, Verdict, check


class RetriesAfterFault(Invariant):
    """After an injected failure on target, the agent retried at most max times."""

    type: Literal["retries_after_fault"]
    target: str
    max: int = Field(ge=0)

    def evaluate(self, obs: Observation) -> Verdict:
        calls = [e for e in obs.journal if self.target in e.get("targets", [])]
        first = next((i for i, e in enumerate(calls) if e.get("fault")), None)
        if first is None:
            return check(True, f"no fault was injected on {self.target}, so no retry to count", "")
        retries = len(calls) - first - 1
        return check(
            retries <= self.max,
            f"{retries} retries after the fault (max {self.max})",
            f"{retries} retries after the fault, more than {self.max}",
            retries=retries,
        )
