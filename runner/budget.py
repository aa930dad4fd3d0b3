"""run.budget: the run's spend so far (every episode's LLM calls, tokens and cost), and the stop once it is more
than a budget (flakeproxy.errors.BudgetCrossed, exit 5)."""

from __future__ import annotations

from flakeproxy.config.settings import RunBudget
from flakeproxy.errors import BudgetCrossed
from flakeproxy.invariants.spend import plural
from flakeproxy.results_spend import Spend


class RunSpend:
    """What the run's episodes spent so far; `charge` each one as it ends."""

    def __init__(self, budget: RunBudget | None) -> None:
        self.budget = budget
        self.llm_calls = self.tokens = self.unknown_calls = 0
        self.cost_usd = 0.0
        self.unpriced = False  # some model had no price: the cost so far leaves it out

    def charge(self, spend: Spend) -> None:
        self.llm_calls += spend.llm_calls
        self.tokens += spend.total_tokens
        self.cost_usd += spend.cost_usd
        self.unknown_calls += spend.unknown_calls
        self.unpriced = self.unpriced or bool(spend.unpriced_models)

    def crossed(self) -> str | None:
        """Which budget the spend so far is more than, and by what (None: within them all)."""
        budget = self.budget
        if budget is None:
            return None
        if budget.llm_calls is not None and self.llm_calls > budget.llm_calls:
            return f"run.budget.llm_calls: {self.llm_calls} LLM calls, more than {budget.llm_calls}"
        at_least = "at least " if self.unknown_calls else ""
        if budget.tokens is not None and self.tokens > budget.tokens:
            return f"run.budget.tokens: {at_least}{self.tokens} tokens, more than {budget.tokens}"
        if budget.cost is not None and self.cost_usd > budget.cost:
            return f"run.budget.cost: {at_least}${self.cost_usd:.4f}, more than ${budget.cost:g}"
        return None

    def check(self) -> None:
        """Raise BudgetCrossed when the spend so far is more than a budget."""
        reason = self.crossed()
        if reason is not None:
            raise BudgetCrossed(f"the run budget was crossed ({reason}); partial results written")

    def line(self) -> str:
        """The whole run's spend so far, for progress lines (said so: after an episode's line it read as that
        episode's); a sum is marked + when it is a lower bound (calls of unknown usage, models without a price)."""
        unknown = f" ({self.unknown_calls} with unknown usage)" if self.unknown_calls else ""
        tokens = f"{self.tokens}{'+' if self.unknown_calls else ''}"
        cost = f"${self.cost_usd:.4f}{'+' if self.unknown_calls or self.unpriced else ''}"
        return f"run so far: {plural(self.llm_calls, 'LLM call')}{unknown}, {tokens} tokens, {cost}"
