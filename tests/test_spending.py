"""flakeproxy.judging.spending and runner.budget, pure: an episode's spend from its journal, a scenario's
amplification over the calm runs of the same prompts (null where a count is unknown), and run.budget's stop."""

from __future__ import annotations

from typing import Any

import pytest

from flakeproxy.config import parse_config
from flakeproxy.config.default_pricing import DEFAULT_PRICING, effective_pricing
from flakeproxy.config.pricing import PricingTable
from flakeproxy.config.settings import RunBudget
from flakeproxy.errors import BudgetCrossed
from flakeproxy.judging.spending import added, episode_spend, scenario_spend
from flakeproxy.results import Episode
from flakeproxy.results_spend import Spend
from flakeproxy.runner.budget import RunSpend
from tests.invariants.journals import PRICING, llm, llm_error, llm_unknown, mcp, tool

CONFIG = parse_config(
    """
version: "2.0"
targets: {llm: {listener: llm, api: openai}}
golden_prompts: ["a", "b"]
contract: {name: c, invariants: [{id: x, type: completes}]}
chaos_matrix:
  - {name: calm}
  - {name: loud, llm_faults: [{mode: error, error_code: 503}]}
proxy: {listeners: [{name: llm, listen: "127.0.0.1:1", upstream: "http://127.0.0.1:2"}]}
pricing: {models: {"gpt-4o*": {input_usd_per_mtok: 2.5, output_usd_per_mtok: 10}}}
""",
    "t.yaml",
)


def episode(n: int, scenario: str, prompt: str, journal: list[dict[str, Any]]) -> Episode:
    return Episode(id=f"e{n}", scenario=scenario, prompt=prompt, prompt_index=0, label=f"l{n}", journal=journal)


def test_an_episodes_spend_adds_its_calls_and_counts_unknown_ones() -> None:
    spend = episode_spend([llm(1, 100, 20), tool(2), llm_unknown(3, input_tokens=50), mcp(4, "search", {}, 1)], PRICING)
    # the cut call's input was reported (message_start, say) and counts; its output did not: a lower bound
    assert (spend.llm_calls, spend.input_tokens, spend.output_tokens, spend.unknown_calls) == (2, 150, 20, 1)
    assert spend.tool_calls == {"quotes": 1, "search": 1} and spend.cost_usd == (100 * 2.5 + 20 * 10) / 1e6
    assert not spend.exact and spend.measure("tokens") is None and spend.measure("llm_calls") == 2.0
    unpriced = episode_spend([llm(1, 10, 10, model="o3")], PRICING)
    assert unpriced.unpriced_models == ["o3"] and unpriced.measure("cost") is None
    assert added([spend, unpriced]).llm_calls == 3 and added([]).total_tokens == 0


def test_amplification_is_over_the_calm_runs_of_the_same_prompt() -> None:
    episodes = [
        episode(1, "calm", "a", [llm(1, 100, 0)]),
        episode(2, "calm", "b", [llm(1, 10, 0)]),
        episode(3, "loud", "a", [llm(1, 300, 0), llm_error(2)]),  # a: 3x the tokens, 2x the calls
        episode(4, "loud", "b", [llm(1, 10, 0)]),
    ]
    calm, loud = scenario_spend(CONFIG, episodes)
    assert calm.calm and calm.amplification["tokens"] == 1.0
    assert loud.amplification == {"tokens": round(310 / 110, 3), "llm_calls": 1.5, "tool_calls": None, "cost": 2.818}
    assert episodes[2].spend is not None and episodes[2].spend.llm_calls == 2  # kept on the episode
    unknown = [*episodes[:3], episode(4, "loud", "b", [llm_unknown(1)])]
    assert scenario_spend(CONFIG, unknown)[1].amplification["tokens"] is None  # unknown is not zero
    assert scenario_spend(CONFIG, episodes[2:])[0].amplification["tokens"] is None  # no calm run


def test_micro_dollar_costs_and_their_amplification_are_not_rounded() -> None:
    """1 and 2 input tokens at $2.5 per million: $0.0000025 and $0.000005, twice the cost (rounded to $0.000001
    first, the factor read 1.667 or 2.5, and a $0.0000025 episode cost $0.000002)."""
    episodes = [episode(1, "calm", "a", [llm(1, 1, 0)]), episode(2, "loud", "a", [llm(1, 2, 0)])]
    calm, loud = scenario_spend(CONFIG, episodes)
    assert (calm.total.cost_usd, loud.total.cost_usd) == (2.5 / 1e6, 5 / 1e6)
    assert loud.amplification["cost"] == 2.0
    assert added(e.spend for e in episodes if e.spend is not None).cost_usd == pytest.approx(7.5 / 1e6, rel=1e-12)


def test_the_config_pricing_falls_back_on_the_dated_defaults() -> None:
    table = effective_pricing(CONFIG.pricing)
    assert table.price("gpt-4o-mini") is not None and table.price("gpt-4o-mini")[0] == "gpt-4o*"  # type: ignore[index]
    assert table.price("claude-sonnet-4-6") == DEFAULT_PRICING.price("claude-sonnet-4-6")
    only = PricingTable.model_validate({"defaults": False, "models": {}}).over(DEFAULT_PRICING)
    assert only.price("claude-sonnet-4-6") is None
    assert effective_pricing(None) is DEFAULT_PRICING


@pytest.mark.parametrize(
    ("budget", "crossed"),
    [
        ({"llm_calls": 3}, "run.budget.llm_calls: 4 LLM calls, more than 3"),
        ({"llm_calls": 4}, None),
        ({"tokens": 399}, "run.budget.tokens: at least 400 tokens, more than 399"),
        ({"cost": 0.001}, "run.budget.cost: at least $0.0040, more than $0.001"),
        ({}, None),  # no run.budget at all (an empty one is a config error)
    ],
)
def test_run_budget(budget: dict[str, Any], crossed: str | None) -> None:
    spent = RunSpend(RunBudget.model_validate(budget) if budget else None)
    for _ in range(2):
        spent.charge(Spend(llm_calls=2, input_tokens=150, output_tokens=50, cost_usd=0.002, unknown_calls=1))
    assert spent.crossed() == crossed
    if crossed:
        with pytest.raises(BudgetCrossed, match="the run budget was crossed") as e:
            spent.check()
        assert e.value.exit_code == 5
    assert spent.line() == "run so far: 4 LLM calls (2 with unknown usage), 400+ tokens, $0.0040+"


def test_the_progress_line_marks_a_cost_without_every_price_as_a_lower_bound() -> None:
    spent = RunSpend(None)
    spent.charge(Spend(llm_calls=1, input_tokens=10, output_tokens=10, cost_usd=0.0001, unpriced_models=["o3"]))
    assert spent.line() == "run so far: 1 LLM call, 20 tokens, $0.0001+"


def test_a_request_matching_two_targets_is_one_tool_call() -> None:
    """Counted under each target it matched, once in the total (a new user saw 2 requests shown as 3)."""
    both = {**tool(1), "targets": ["quotes", "market"]}
    spend = episode_spend([both, tool(2)], PricingTable())
    assert spend.tool_calls == {"quotes": 2, "market": 1} and spend.tool_call_count == 2
    assert added([spend, spend]).tool_call_count == 4
    assert Spend(tool_calls={"a": 1, "b": 2}).tool_call_count == 3  # a results.json from before tool_requests
