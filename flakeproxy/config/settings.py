"""Run settings, scoring, the services checks query, and the LLM judge."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from flakeproxy.config.anchor import flat_weights
from flakeproxy.config.base import HostPort, HttpUrl, StrictModel


class RunBudget(StrictModel):
    """What the whole run may spend on LLM calls, read from the usage the providers report. Checked after each
    episode: once the spend so far is more than a budget, the run stops (episodes under way are cancelled), writes
    its partial results and reports with the reason, and exits 5."""

    tokens: int | None = Field(None, ge=0, description="The most input + output tokens over every LLM call.")
    cost: float | None = Field(None, ge=0.0, description="The most USD over every LLM call (priced with pricing:).")
    llm_calls: int | None = Field(None, ge=0, description="The most LLM requests (errors and retries count).")


class RunConfig(StrictModel):
    seed: int = Field(0, description="Seeds every fault decision; the same seed gives the same faults.")
    concurrency: int = Field(
        1,
        ge=1,
        le=64,
        description="Episodes run at once (of any scenarios); needs run.attribution (else one at a time). "
        "With attribution: slots, at most one per slot.",
    )
    replicas: int = Field(1, ge=1, le=100, description="Times each episode (prompt x scenario) runs.")
    isolation: Literal["episode", "cell"] = Field(
        "episode",
        description="episode: every invariant judges the same invocations (one paid agent run per answer); "
        "cell: each invariant x scenario cell invokes the agent itself (the spec's literal reading).",
    )
    attribution: Literal["none", "header", "trace", "slots"] = Field(
        "none",
        description="How the proxy ties a request to its episode when episodes overlap: header = the agent "
        "forwards x-flakeproxy-cell on its outgoing calls; trace = the agent propagates the W3C traceparent (or "
        "baggage) the runner sends with each prompt (OpenTelemetry); slots = one agent instance per slot of "
        "listeners (proxy.slots); none = episodes run one at a time.",
    )
    output: str = Field("flakeproxy-results", description="Folder for results.json, JUnit XML and HTML.")
    workspace: str | None = Field(
        None, description="The agent's working directory, for file and command checks (relative: to the config file)."
    )
    budget: RunBudget | None = Field(None, description="Stop the run once its LLM calls spent more than this.")


class ScoringWeights(StrictModel):
    mutation: float = Field(0.20, ge=0.0, le=1.0)
    chaos: float = Field(0.35, ge=0.0, le=1.0)
    contract: float = Field(0.35, ge=0.0, le=1.0)
    replay: float = Field(0.10, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _sum_to_one(self) -> ScoringWeights:
        total = self.mutation + self.chaos + self.contract + self.replay
        if not math.isclose(total, 1.0, abs_tol=1e-3):
            raise ValueError(
                f"mutation + chaos + contract + replay must sum to 1.0, got {total:g}; "
                "e.g. {mutation: 0.20, chaos: 0.35, contract: 0.35, replay: 0.10}"
            )
        return self


class ScoringConfig(StrictModel):
    weights: ScoringWeights = Field(
        default_factory=ScoringWeights,
        description="The ci pillars' weights; also accepted flat, as the anchor writes them: scoring: {mutation: "
        "0.2, chaos: 0.35, contract: 0.35, replay: 0.1}.",
    )
    min_resilience: float | None = Field(
        None,
        ge=0.0,
        le=100.0,
        description="Fail (exit 1) when the resilience score (0-100) is below this. Without it, only a critical "
        "invariant (or a gate, or pass_threshold) can fail a run: a contract of high/medium/low invariants "
        "PASSes even at 0%, and validate warns.",
    )
    pass_threshold: float | None = Field(
        None, ge=0.0, le=1.0, description="Fail when the composite score is below this."
    )
    min_overall: float | None = Field(
        None, ge=0.0, le=100.0, description="flakeproxy ci fails when the overall score (0-100) is below this."
    )
    replica_aggregation: Literal["all", "majority", "mean", "at_least_k", "pass_at_k"] = "all"
    k: int = Field(1, ge=1, description="For at_least_k and pass_at_k.")
    confidence: float = Field(
        0.95,
        gt=0.5,
        lt=1.0,
        description="The confidence of each replicated cell's pass-rate interval (Wilson score interval).",
    )

    @model_validator(mode="before")
    @classmethod
    def _flat_weights(cls, value: Any) -> Any:
        return flat_weights(value)


class SqlService(StrictModel):
    type: Literal["postgres", "mysql"]
    dsn: str = Field(min_length=1, description="e.g. postgresql://user@127.0.0.1:5432/test")


class MockRoute(StrictModel):
    method: str = Field("GET", pattern=r"^[A-Z]+$")
    path: str = Field(min_length=1, description="A glob on the request path.")
    status: int = Field(200, ge=100, le=599)
    body: str = ""
    headers: dict[str, str] = Field(default_factory=dict)


class HttpMockService(StrictModel):
    type: Literal["http_mock"]
    listen: HostPort
    record: bool = True
    routes: list[MockRoute] = Field(default_factory=list)


Service = Annotated[SqlService | HttpMockService, Field(discriminator="type")]


class JudgeConfig(StrictModel):
    base_url: HttpUrl
    api_key: str | None = None
    model: str | None = None
