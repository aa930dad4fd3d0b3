from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.spend import Tally, llm_calls, spend_usd, tokens, tool_calls
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge, failed, nothing_to_judge, passed

Measure = Literal["tokens", "llm_calls", "tool_calls", "cost"]
LABEL = {"tokens": "tokens", "llm_calls": "LLM calls", "tool_calls": "tool calls", "cost": "cost"}


class Amplification(Invariant):
    """The episode spent at most max_factor times what the calm run of the same prompt spent.

    measure says what: total tokens, LLM calls, tool calls or cost.

    n/a when the usage it needs is unknown (in either run) or when neither run spent any; ERROR without a calm
    run, or (cost) without a price for a model.
    """

    type: Literal["amplification"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    uses_baseline: ClassVar[bool] = True
    max_factor: float = Field(gt=0.0, description="The most this episode may spend, as a multiple of the calm run.")
    measure: Measure = Field("tokens", description="What is compared: tokens (total), llm_calls, tool_calls, cost.")

    def _tally(self, journal: list[dict[str, Any]], obs: Observation) -> Tally:
        if self.measure == "tokens":
            return tokens(journal, "total")
        if self.measure == "cost":
            return spend_usd(journal, obs.pricing)
        if self.measure == "llm_calls":
            return Tally(float(len(llm_calls(journal))))
        return Tally(float(sum(len(c) for c in tool_calls(journal).values())))

    def evaluate(self, obs: Observation) -> Verdict:
        if obs.baseline_journal is None:
            return cannot_judge("no calm run of this prompt to compare with")
        if self.measure == "cost" and obs.pricing is None:
            return cannot_judge("no pricing table to price the LLM calls with")
        now, calm = self._tally(obs.journal, obs), self._tally(obs.baseline_journal, obs)
        what = LABEL[self.measure]
        evidence = {"measure": self.measure, "episode": round(now.known, 6), "calm": round(calm.known, 6)}
        for run, tally in (("this episode", now), ("the calm run", calm)):
            if tally.unpriced:
                return cannot_judge(f"no price for {', '.join(tally.unpriced)} ({run}): add it under pricing:")
        if not calm.exact:
            return nothing_to_judge(f"the calm run's {what} cannot be counted: {calm.unknown[0]}", **evidence)
        if calm.known == 0:
            if now.known > 0:
                return failed(f"{now.known:g} {what} where the calm run had none", **evidence)
            return nothing_to_judge(f"neither this episode nor the calm run had any {what}", **evidence)
        factor = round(now.known / calm.known, 3)
        if factor > self.max_factor:
            at_least = "" if now.exact else "at least "
            return failed(
                f"{at_least}{factor}x the calm run's {what}, more than {self.max_factor:g}x",
                factor=factor,
                **evidence,
            )
        if not now.exact:
            return nothing_to_judge(f"this episode's {what} cannot be counted: {now.unknown[0]}", **evidence)
        return passed(f"{factor}x the calm run's {what} (max {self.max_factor:g}x)", factor=factor, **evidence)
