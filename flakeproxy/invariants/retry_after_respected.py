from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.retries import on_target, retries_of
from flakeproxy.judging.verdict import Observation, Verdict, check, nothing_to_judge


def asked_wait_ms(entry: dict[str, Any]) -> float | None:
    """The wait an answer asked for: retry-after-ms, or Retry-After in seconds; None when it asked none."""
    headers = entry.get("response_headers") or {}
    ms, seconds = headers.get("retry-after-ms", "").strip(), headers.get("retry-after", "").strip()
    for value, scale in ((ms, 1.0), (seconds, 1000.0)):
        try:
            return float(value) * scale
        except ValueError:
            continue  # empty, or an HTTP date (not served by flakeproxy's faults)
    return None


class RetryAfterRespected(Invariant):
    """After an answer from target with Retry-After, the agent waited at least that long before retrying it.

    n/a when no Retry-After was served on target in the episode, or the agent did not retry it there: no wait was
    seen to judge (a pass would count an agent that gives up at the first 429 as one that waits).
    """

    type: Literal["retry_after_respected"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    target: str
    tolerance_ms: int = Field(50, ge=0)

    def evaluate(self, obs: Observation) -> Verdict:
        calls = on_target(obs.journal, self.target)
        asked = [(i, ms) for i, e in enumerate(calls) if (ms := asked_wait_ms(e)) is not None]
        if not asked:
            return nothing_to_judge(f"no Retry-After was served on {self.target} in this episode")
        waits = []
        for i, wanted_ms in asked:
            repeats = retries_of(calls, i)
            if not repeats:
                continue
            answered = calls[i]["started_at"] + (calls[i].get("latency_ms") or 0) / 1000
            waited_ms = (repeats[0]["started_at"] - answered) * 1000
            waits.append(round(waited_ms))
            if waited_ms + self.tolerance_ms < wanted_ms:
                return check(
                    False,
                    "",
                    f"retried after {waited_ms:.0f} ms; Retry-After asked {wanted_ms / 1000:g} s",
                    waited_ms=round(waited_ms),
                    asked_ms=wanted_ms,
                )
        if not waits:
            return nothing_to_judge(
                f"Retry-After served {len(asked)} time(s); the agent did not retry: no wait to judge"
            )
        return check(True, f"each of {len(waits)} retries waited as asked (waited {waits} ms)", "", waited_ms=waits)
