"""amplification: this episode's tokens, calls or cost over the calm run's for the same prompt."""

from __future__ import annotations

from typing import Any

import pytest

from tests.invariants.journals import PRICING, llm, llm_error, llm_unknown, tool
from tests.invariants.spend_judge import judge

# calm: one tool call, two LLM calls, 1000 tokens ($0.004 at gpt-4o's 2.5 / 10 USD per million)
CALM = [llm(1, 400, 100), tool(2), llm(3, 400, 100)]
# under a tool outage the agent retried and re-planned: 3 tool calls, 5 LLM calls (one 429), 2500 tokens ($0.00925)
STORM = [
    llm(1, 400, 100),
    tool(2),
    llm(3, 500, 100),
    tool(4),
    llm(5, 600, 100),
    tool(6),
    llm_error(7),
    llm(8, 600, 100),
]


@pytest.mark.parametrize(
    ("spec", "journal", "calm", "outcome", "reason"),
    [
        ({"max_factor": 2}, STORM, CALM, "fail", "2.5x the calm run's tokens, more than 2x"),
        ({"max_factor": 2.5}, STORM, CALM, "pass", "2.5x the calm run's tokens (max 2.5x)"),
        ({"max_factor": 2, "measure": "llm_calls"}, STORM, CALM, "fail", "2.5x the calm run's LLM calls, more than 2x"),
        ({"max_factor": 3, "measure": "tool_calls"}, STORM, CALM, "pass", "3.0x the calm run's tool calls (max 3x)"),
        ({"max_factor": 1, "measure": "cost"}, CALM, CALM, "pass", "1.0x the calm run's cost (max 1x)"),
        ({"max_factor": 2, "measure": "cost"}, STORM, CALM, "fail", "2.313x the calm run's cost, more than 2x"),
        # unknown usage: in the calm run, n/a; in this episode, n/a unless the known part already exceeds
        (
            {"max_factor": 5},
            STORM,
            [*CALM, llm_unknown(4)],
            "not_applicable",
            "the calm run's tokens cannot be counted",
        ),
        (
            {"max_factor": 5},
            [*STORM, llm_unknown(9)],
            CALM,
            "not_applicable",
            "this episode's tokens cannot be counted",
        ),
        ({"max_factor": 2}, [*STORM, llm_unknown(9)], CALM, "fail", "at least 2.5x the calm run's tokens"),
        # a calm run that spent nothing
        (
            {"max_factor": 2, "measure": "tool_calls"},
            [tool(1)],
            [llm(1, 1, 1)],
            "fail",
            "1 tool calls where the calm run had none",
        ),
        (
            {"max_factor": 2, "measure": "tool_calls"},
            [llm(1, 1, 1)],
            [llm(1, 1, 1)],
            "not_applicable",
            "neither this episode nor the calm",
        ),
    ],
)
def test_amplification(
    spec: dict[str, Any], journal: list[dict[str, Any]], calm: list[dict[str, Any]], outcome: str, reason: str
) -> None:
    verdict = judge({"type": "amplification", **spec}, journal, baseline_journal=calm, pricing=PRICING)
    assert (verdict.outcome, verdict.reason[: len(reason)]) == (outcome, reason)


def test_it_needs_a_calm_run_and_for_cost_prices() -> None:
    spec = {"type": "amplification", "max_factor": 2}
    assert judge(spec, STORM).reason == "no calm run of this prompt to compare with"
    no_table = judge({**spec, "measure": "cost"}, STORM, baseline_journal=CALM)
    assert (no_table.outcome, no_table.reason) == ("error", "no pricing table to price the LLM calls with")
    unpriced = judge({**spec, "measure": "cost"}, [llm(1, 5, 5, "o3")], baseline_journal=CALM, pricing=PRICING)
    assert (unpriced.outcome, unpriced.reason) == ("error", "no price for o3 (this episode): add it under pricing:")


def test_evidence() -> None:
    verdict = judge({"type": "amplification", "max_factor": 2}, STORM, baseline_journal=CALM)
    assert verdict.evidence == {"measure": "tokens", "episode": 2500, "calm": 1000, "factor": 2.5}
