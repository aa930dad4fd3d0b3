from __future__ import annotations

import itertools
from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.verdict import Observation, Verdict, check


class RetryAfterRespected(Invariant):
    """After a Retry-After answer from target, the agent waited at least that long before retrying."""

    type: Literal["retry_after_respected"]
    target: str
    tolerance_ms: int = Field(50, ge=0)

    def evaluate(self, obs: Observation) -> Verdict:
        calls = sorted((e for e in obs.journal if self.target in e.get("targets", [])), key=lambda e: e["started_at"])
        for asked, then in itertools.pairwise(calls):
            value = (asked.get("response_headers") or {}).get("retry-after")
            if not value or not value.strip().isdigit():
                continue
            answered = asked["started_at"] + (asked.get("latency_ms") or 0) / 1000
            waited_ms = (then["started_at"] - answered) * 1000
            if waited_ms + self.tolerance_ms < int(value) * 1000:
                return check(
                    False,
                    "",
                    f"retried after {waited_ms:.0f} ms; Retry-After asked {value} s",
                    waited_ms=round(waited_ms),
                )
        return check(True, f"every retry of {self.target} waited as asked", "")
