from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.retries import applied_fault, on_target, retries_of
from flakeproxy.judging.verdict import Observation, Verdict, check, nothing_to_judge


class RetriesAfterFault(Invariant):
    """After a fault applied on target, the agent repeated that request at most max times.

    A retry is a repeat of the faulted request (same method, URL and body, or the SDK's retry-count header),
    so the agent's next, different call is not counted. n/a when no fault applied on target in the episode.
    """

    type: Literal["retries_after_fault"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    target: str
    max: int = Field(ge=0)

    def evaluate(self, obs: Observation) -> Verdict:
        calls = on_target(obs.journal, self.target)
        faulted = [i for i, e in enumerate(calls) if applied_fault(e)]
        if not faulted:
            return nothing_to_judge(f"no fault applied on {self.target} in this episode, so no retry to count")
        counted: set[int] = set()
        worst = 0
        for i in faulted:
            if i in counted:
                continue
            repeats = retries_of(calls, i)
            counted.update(calls.index(e) for e in repeats)
            worst = max(worst, len(repeats))
        return check(
            worst <= self.max,
            f"{worst} retr{'y' if worst == 1 else 'ies'} of the faulted request (max {self.max})",
            f"{worst} retries of the faulted request, more than {self.max}",
            retries=worst,
            faulted_requests=len(faulted),
            requests_to_target=len(calls),
        )
