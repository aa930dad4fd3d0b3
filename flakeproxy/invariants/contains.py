from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, check, excerpt


class Contains(Invariant):
    """The answer contains value (case-insensitive)."""

    type: Literal["contains"]
    reads_whole: ClassVar[bool] = True
    value: str = Field(min_length=1)

    def evaluate(self, obs: Observation) -> Verdict:
        text = obs.text or ""
        at = text.lower().find(self.value.lower())
        return check(
            at >= 0,
            f"contains {self.value!r}",
            f"does not contain {self.value!r}",
            excerpt=excerpt(text, at, at + len(self.value)) if at >= 0 else excerpt(text),
        )
