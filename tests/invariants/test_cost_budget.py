"""cost_budget: the episode's LLM calls priced with the pricing table, against max_usd."""

from __future__ import annotations

from typing import Any

import pytest

from flakeproxy.config.pricing import PricingTable
from tests.invariants.journals import PRICING, llm, llm_error, llm_unknown, tool
from tests.invariants.spend_judge import judge

# gpt-4o at 2.5 / 10 USD per million: 0.25 + 0.10 and 0.50 + 0.40 = 1.25 USD
CALLS = [llm(1, 100_000, 10_000), tool(2), llm_error(3), llm(4, 200_000, 40_000)]


@pytest.mark.parametrize(
    ("spec", "journal", "outcome", "reason"),
    [
        ({"max_usd": 1.25}, CALLS, "pass", "$1.25 in 3 LLM calls (max $1.25)"),
        ({"max_usd": 1.0}, CALLS, "fail", "$1.25 in 3 LLM calls, more than $1"),
        ({"max_usd": 1.0}, [tool(1)], "not_applicable", "no LLM call in this episode: nothing to price"),
        ({"max_usd": 5}, [*CALLS, llm_unknown(5)], "not_applicable", "$1.25 counted, but call #5 (POST"),
        ({"max_usd": 1}, [*CALLS, llm_unknown(5)], "fail", "at least $1.25 in 4 LLM calls, more than $1"),
        # a model the table does not price: ERROR, so the user adds it, unless the priced calls already fail
        ({"max_usd": 5}, [*CALLS, llm(5, 10, 10, model="o3")], "error", "no price for o3: add it under pricing:"),
        ({"max_usd": 1}, [*CALLS, llm(5, 10, 10, model="o3")], "fail", "at least $1.25 in 4 LLM calls"),
        ({"max_usd": 5}, [llm(1, 10, 10, model=None)], "error", "no price for (an answer that names no model)"),
    ],
)
def test_cost_budget(spec: dict[str, Any], journal: list[dict[str, Any]], outcome: str, reason: str) -> None:
    verdict = judge({"type": "cost_budget", **spec}, journal, pricing=PRICING)
    assert (verdict.outcome, verdict.reason[: len(reason)]) == (outcome, reason)


def test_without_a_pricing_table_it_cannot_judge() -> None:
    verdict = judge({"type": "cost_budget", "max_usd": 1}, CALLS)
    assert (verdict.outcome, verdict.reason) == ("error", "no pricing table to price the LLM calls with")


MINI = PricingTable.model_validate({"models": {"gpt-4o*": {"input_usd_per_mtok": 0.15, "output_usd_per_mtok": 0.6}}})


@pytest.mark.parametrize(
    ("max_usd", "outcome", "reason"),
    [
        (0.000057, "fail", "$5.73e-05 in 1 LLM call, more than $5.7e-05"),  # rounded to $0.000001, it passed
        (0.0000573, "pass", "$5.73e-05 in 1 LLM call (max $5.73e-05)"),  # the cost itself: a float sum's bits forgiven
    ],
)
def test_a_micro_dollar_budget_is_judged_on_the_unrounded_cost(max_usd: float, outcome: str, reason: str) -> None:
    """102 tokens in at $0.15 and 70 out at $0.60 per million: $0.0000573 (a new user's budget was $0.000057)."""
    verdict = judge({"type": "cost_budget", "max_usd": max_usd}, [llm(1, 102, 70)], pricing=MINI)
    assert (verdict.outcome, verdict.reason) == (outcome, reason)
    assert verdict.evidence["usd"] == pytest.approx(0.0000573, rel=1e-12)
