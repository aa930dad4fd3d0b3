from __future__ import annotations

import math
from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.spend import plural, spend_usd
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge, failed, nothing_to_judge, passed


class CostBudget(Invariant):
    """The episode's LLM calls cost at most max_usd, priced from their reported usage with the pricing table.

    n/a when it made no LLM call, or when a call's usage is unknown and the priced calls stay within max_usd;
    ERROR when a model has no price (add it under pricing:); when the priced calls alone exceed it, it fails.
    The cost is judged as computed, never rounded (a micro-dollar budget is kept or not by the true cost); only a
    float sum's last bits are forgiven, so a budget equal to the cost passes.
    """

    type: Literal["cost_budget"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    max_usd: float = Field(ge=0.0, description="The most the episode's LLM calls may cost, in USD.")

    def evaluate(self, obs: Observation) -> Verdict:
        if obs.pricing is None:
            return cannot_judge("no pricing table to price the LLM calls with")
        tally = spend_usd(obs.journal, obs.pricing)
        usd = tally.known
        evidence = {"usd": usd, "llm_calls": tally.calls, "unknown": tally.unknown, "unpriced": tally.unpriced}
        if tally.calls == 0:
            return nothing_to_judge("no LLM call in this episode: nothing to price", **evidence)
        if usd > self.max_usd and not math.isclose(usd, self.max_usd, rel_tol=1e-9, abs_tol=0.0):
            at_least = "" if tally.exact else "at least "
            return failed(
                f"{at_least}${usd:g} in {plural(tally.calls, 'LLM call')}, more than ${self.max_usd:g}", **evidence
            )
        if tally.unpriced:
            return cannot_judge(
                f"no price for {', '.join(tally.unpriced)}: add it under pricing: (USD per million tokens)", **evidence
            )
        if tally.unknown:
            return nothing_to_judge(f"${usd:g} counted, but {tally.unknown[0]}", **evidence)
        return passed(f"${usd:g} in {plural(tally.calls, 'LLM call')} (max ${self.max_usd:g})", **evidence)
