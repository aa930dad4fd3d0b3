from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.spend import TokenKind, plural, tokens
from flakeproxy.judging.verdict import Observation, Verdict, failed, nothing_to_judge, passed


class TokenBudget(Invariant):
    """The episode's LLM calls used at most max tokens (input, output or total), as the provider reported them.

    Cached input counts as input, reasoning as output.

    n/a when it made no LLM call, or when a call's usage is unknown (a cut stream, include_usage off) and the
    calls that were counted stay within max; when those alone exceed it, it fails.
    """

    type: Literal["token_budget"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    max: int = Field(ge=0, description="The most tokens the episode may use.")
    tokens: TokenKind = Field("total", description="Which tokens count: input, output or total.")

    def evaluate(self, obs: Observation) -> Verdict:
        tally = tokens(obs.journal, self.tokens)
        used, what = int(tally.known), f"{self.tokens} tokens"
        evidence = {"tokens": used, "kind": self.tokens, "llm_calls": tally.calls, "unknown": tally.unknown}
        if tally.calls == 0:
            return nothing_to_judge("no LLM call in this episode: no tokens to count", **evidence)
        if used > self.max:
            at_least = "" if tally.exact else "at least "
            return failed(
                f"{at_least}{used} {what} in {plural(tally.calls, 'LLM call')}, more than {self.max}", **evidence
            )
        if not tally.exact:
            return nothing_to_judge(f"{used} {what} counted, but {tally.unknown[0]}", **evidence)
        return passed(f"{used} {what} in {plural(tally.calls, 'LLM call')} (max {self.max})", **evidence)
