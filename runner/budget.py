"""run.budget: the run's spend so far (every episode's LLM calls, tokens and cost, and those of the requests no
episode could be tied to: this run made them too), and the stop once it is more than a budget
(flakeproxy.errors.BudgetCrossed, exit 5)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flakeproxy.config.settings import RunBudget
from flakeproxy.errors import BudgetCrossed
from flakeproxy.invariants.retries import applied_fault
from flakeproxy.invariants.spend import describe, llm_calls, plural, usage_of
from flakeproxy.results_spend import Spend

#: How to get the usage reported, by what the unknown usage's reason says (the first that matches).
USAGE_FIXES = (
    (
        "include_usage was not set",
        "have the agent ask for it on its streamed chat completions, stream_options: {include_usage: true} (the "
        "OpenAI Agents SDK sets it only for api.openai.com: ModelSettings(include_usage=True))",
    ),
    (
        "the request was not read",
        "have the agent set stream_options: {include_usage: true} on its streamed chat completions, or count "
        "calls with run.budget.llm_calls",
    ),
)
#: When the reason names no fix: the provider (or what answers in its place) does not report it.
NO_FIX = "see each call's usage.reason in results.json; run.budget.llm_calls counts every call, whatever its usage"


class RunSpend:
    """What the run spent so far; `charge` each episode as it ends, and the unattributed requests as they are seen."""

    def __init__(self, budget: RunBudget | None) -> None:
        self.budget = budget
        self.llm_calls = self.tokens = self.unknown_calls = self.unattributed_calls = 0
        self.cost_usd = 0.0
        self.unpriced = False  # some model had no price: the cost so far leaves it out
        self.unknown: list[dict[str, Any]] = []  # the LLM calls of unknown usage no fault caused (the first kept)
        self._warned = False

    def charge(self, spend: Spend, journal: Iterable[dict[str, Any]] = (), unattributed: bool = False) -> None:
        """Add what `journal` spent (`spend`, its sum); `unattributed`: no episode could be tied to it."""
        self.llm_calls += spend.llm_calls
        self.tokens += spend.total_tokens
        self.cost_usd += spend.cost_usd
        self.unknown_calls += spend.unknown_calls
        self.unattributed_calls += spend.llm_calls if unattributed else 0
        self.unpriced = self.unpriced or bool(spend.unpriced_models)
        if spend.unknown_calls and not self.unknown:
            self.unknown = [e for e in llm_calls(journal) if usage_of(e).unknown and not applied_fault(e)][:1]

    def _of_which(self, them: str) -> str:
        return f" ({self.unattributed_calls} of {them} unattributed)" if self.unattributed_calls else ""

    def crossed(self) -> str | None:
        """Which budget the spend so far is more than, and by what (None: within them all)."""
        budget = self.budget
        if budget is None:
            return None
        if budget.llm_calls is not None and self.llm_calls > budget.llm_calls:
            calls = f"{self.llm_calls} LLM calls{self._of_which('them')}"
            return f"run.budget.llm_calls: {calls}, more than {budget.llm_calls}"
        at_least = "at least " if self.unknown_calls else ""
        of_which = self._of_which(f"the {plural(self.llm_calls, 'LLM call')}")
        if budget.tokens is not None and self.tokens > budget.tokens:
            return f"run.budget.tokens: {at_least}{self.tokens} tokens{of_which}, more than {budget.tokens}"
        if budget.cost is not None and self.cost_usd > budget.cost:
            return f"run.budget.cost: {at_least}${self.cost_usd:.4f}{of_which}, more than ${budget.cost:g}"
        return None

    def check(self) -> None:
        """Raise BudgetCrossed when the spend so far is more than a budget."""
        reason = self.crossed()
        if reason is not None:
            raise BudgetCrossed(f"the run budget was crossed ({reason}); partial results written")

    def warning(self) -> str | None:
        """Once in a run, when a budget on tokens or cost is set and an LLM call's usage was not reported (other
        than on a call a fault applied to: a stream it cut is unknown by design): such calls count as nothing, so
        that budget may never be crossed. Says why the usage was unknown and how to have it reported."""
        budget = self.budget
        if self._warned or budget is None or not self.unknown or (budget.tokens is None and budget.cost is None):
            return None
        self._warned = True
        names = " and ".join(f"run.budget.{k}" for k in ("tokens", "cost") if getattr(budget, k) is not None)
        first = self.unknown[0]
        reason = usage_of(first).reason or "not reported"
        fix = next((fix for clue, fix in USAGE_FIXES if clue in reason), NO_FIX)
        return (
            f"warning: {names} can count only the usage the providers report, and LLM calls whose usage was not "
            f"reported were seen (the first, {describe(first)}: {reason}); they count as 0 tokens and $0, so the "
            f"budget may be crossed unseen; fix: {fix}"
        )

    def line(self) -> str:
        """The whole run's spend so far, for progress lines (said so: after an episode's line it read as that
        episode's); a sum is marked + when it is a lower bound (calls of unknown usage, models without a price)."""
        notes = [f"of which {self.unattributed_calls} unattributed"] if self.unattributed_calls else []
        notes += [f"{self.unknown_calls} with unknown usage"] if self.unknown_calls else []
        calls = plural(self.llm_calls, "LLM call") + (f" ({', '.join(notes)})" if notes else "")
        tokens = f"{self.tokens}{'+' if self.unknown_calls else ''}"
        cost = f"${self.cost_usd:.4f}{'+' if self.unknown_calls or self.unpriced else ''}"
        return f"run so far: {calls}, {tokens} tokens, {cost}"
