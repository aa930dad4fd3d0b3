from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, check


class ContainsAny(Invariant):
    """The answer contains at least one of values (case-insensitive)."""

    type: Literal["contains_any"]
    reads_whole: ClassVar[bool] = True
    values: list[str] = Field(min_length=1)

    def evaluate(self, obs: Observation) -> Verdict:
        text = (obs.text or "").lower()
        found = [v for v in self.values if v.lower() in text]
        return check(
            bool(found), f"contains {found[0]!r}" if found else "", f"contains none of {self.values}", found=found
        )
