from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.spend import llm_calls, plural
from flakeproxy.judging.verdict import Observation, Verdict, check, nothing_to_judge


class MaxLlmCalls(Invariant):
    """The agent made at most max LLM calls in the episode (every request counts, retries included).

    n/a when it made none.
    """

    type: Literal["max_llm_calls"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    max: int = Field(ge=1, description="The most LLM requests the episode may make.")

    def evaluate(self, obs: Observation) -> Verdict:
        n = len(llm_calls(obs.journal))
        if n == 0:
            return nothing_to_judge("no LLM call in this episode", llm_calls=0)
        return check(
            n <= self.max,
            f"{plural(n, 'LLM call')} (max {self.max})",
            f"{n} LLM calls, more than {self.max}",
            llm_calls=n,
        )
