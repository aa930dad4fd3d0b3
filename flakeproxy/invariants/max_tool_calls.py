from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.spend import plural, tool_calls
from flakeproxy.judging.verdict import Observation, Verdict, check, nothing_to_judge


class MaxToolCalls(Invariant):
    """The agent called each tool target that targets names (globs) at most max times in the episode.

    n/a when it called none of them.
    """

    type: Literal["max_tool_calls"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    max: int = Field(ge=1, description="The most calls per target.")
    targets: list[str] = Field(default_factory=lambda: ["*"], min_length=1, description="Target names or globs.")

    def evaluate(self, obs: Observation) -> Verdict:
        counts = {t: len(calls) for t, calls in tool_calls(obs.journal, self.targets).items()}
        if not counts:
            return nothing_to_judge(f"no call to {', '.join(self.targets)} in this episode", calls={})
        worst = max(counts, key=lambda t: counts[t])
        over = sorted(t for t, n in counts.items() if n > self.max)
        return check(
            not over,
            f"at most {plural(counts[worst], 'call')} per target ({worst}; max {self.max})",
            f"{', '.join(f'{t}: {counts[t]} calls' for t in over)}, more than {self.max}",
            calls=counts,
        )
