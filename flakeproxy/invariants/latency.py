from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, check


class Latency(Invariant):
    """The agent answered within max_ms."""

    type: Literal["latency"]
    max_ms: int = Field(gt=0)

    def evaluate(self, obs: Observation) -> Verdict:
        ms = round(obs.latency_ms, 1)
        return check(
            ms <= self.max_ms,
            f"answered in {ms} ms (max {self.max_ms})",
            f"took {ms} ms, more than {self.max_ms}",
            latency_ms=ms,
        )
