from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, check


class CallCount(Invariant):
    """The agent called target between min and max times in the episode (traffic seen by the proxy)."""

    type: Literal["call_count"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    target: str
    min: int | None = Field(None, ge=0)
    max: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> CallCount:
        if self.min is None and self.max is None:
            raise ValueError("call_count needs min or max, or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self

    def evaluate(self, obs: Observation) -> Verdict:
        n = sum(1 for e in obs.journal if self.target in e.get("targets", []))
        ok = (self.min is None or n >= self.min) and (self.max is None or n <= self.max)
        bounds = f"[{self.min if self.min is not None else 0}, {self.max if self.max is not None else 'inf'}]"
        return check(
            ok, f"{n} calls to {self.target}, within {bounds}", f"{n} calls to {self.target}, outside {bounds}", calls=n
        )
