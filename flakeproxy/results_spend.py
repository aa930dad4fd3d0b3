"""What episodes and scenarios spent, in results.json (issue 25): LLM calls, tool calls per target, tokens and
cost, read from the usage the providers reported on the wire; and each scenario's amplification over calm.

Unknown is not zero: a call whose usage was not reported counts in `unknown_calls`, and the token and cost sums
are then lower bounds (`exact` is false); an amplification that would need them is null.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MEASURES = ("tokens", "llm_calls", "tool_calls", "cost")


class Spend(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    llm_calls: int = 0
    tool_calls: dict[str, int] = Field(default_factory=dict, description="Requests per tool target.")
    tool_requests: int | None = Field(
        None, description="Tool requests in all (one matching two targets counts once in it, under both above)."
    )
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = Field(0, description="The part of input_tokens read from the provider's prompt cache.")
    cost_usd: float = Field(0.0, description="Priced with the config's pricing: (and the dated default table).")
    unknown_calls: int = Field(0, description="LLM calls whose usage was not reported: the sums are lower bounds.")
    unpriced_models: list[str] = Field(default_factory=list, description="Models without a price: cost is low.")

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def tool_call_count(self) -> int:
        """Requests to tools (results before tool_requests existed: the per-target sum)."""
        return self.tool_requests if self.tool_requests is not None else sum(self.tool_calls.values())

    @property
    def exact(self) -> bool:
        return self.unknown_calls == 0 and not self.unpriced_models

    def measure(self, what: str) -> float | None:
        """tokens, llm_calls, tool_calls or cost; None when it cannot be counted (unknown usage, no price)."""
        if what == "llm_calls":
            return float(self.llm_calls)
        if what == "tool_calls":
            return float(self.tool_call_count)
        if self.unknown_calls:
            return None
        if what == "tokens":
            return float(self.total_tokens)
        return None if self.unpriced_models else self.cost_usd


class ScenarioSpend(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    scenario: str
    calm: bool = Field(False, description="The calm scenario, the baseline of the others' amplification.")
    episodes: int = 0
    total: Spend = Field(default_factory=Spend, description="Over its episodes.")
    amplification: dict[str, float | None] = Field(
        default_factory=dict,
        description="tokens, llm_calls, tool_calls, cost: this scenario's over the calm runs of the same prompts "
        "(null: no calm run, nothing spent when calm, or a count that is unknown).",
    )
