"""Run settings, scoring, the services checks query, and the LLM judge."""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Discriminator, Field, Tag, field_validator, model_validator

from flakeproxy.config.anchor import flat_weights
from flakeproxy.config.base import HostPort, HttpUrl, StrictModel


class AdaptiveReplicas(StrictModel):
    """run.replicas: {min, max}: every cell gets `min` replicas; then only cells whose verdict is still open (by the
    group-sequential rate rule of flakeproxy/judging/stats_sequential.py, at scoring.min_pass_rate) get more, in
    rounds, until settled or `max`."""

    shape_tag: ClassVar[str] = "adaptive"  # its Tag in Replicas (config/problems.py follows it in error paths)
    min: int = Field(2, ge=1, le=1000, description="Replicas every cell gets before its first look.")
    max: int = Field(30, ge=1, le=1000, description="The most replicas any cell gets.")
    every: int = Field(1, ge=1, le=100, description="Replicas between looks (a round adds at most this many).")

    @model_validator(mode="after")
    def _min_within_max(self) -> AdaptiveReplicas:
        if self.min > self.max:
            raise ValueError(f"replicas min ({self.min}) is more than max ({self.max}); e.g. {{min: 2, max: 30}}")
        return self


def _replicas_shape(value: Any) -> Any:
    """A number or {min, max}: anything else (a list, true) is said in those words, not as an integer's error."""
    if isinstance(value, bool) or not isinstance(value, int | dict | AdaptiveReplicas):
        raise ValueError("must be a number (e.g. 3) or {min: 2, max: 30} (adaptive)")
    return value


def _replicas_kind(value: Any) -> str:
    return "adaptive" if isinstance(value, dict | AdaptiveReplicas) else "fixed"


#: an int (fixed), or {min, max} (adaptive); the tag keeps a wrong value's error to the shape it was written in
Replicas = Annotated[
    Annotated[int, Tag("fixed"), Field(ge=1, le=100)] | Annotated[AdaptiveReplicas, Tag("adaptive")],
    Discriminator(_replicas_kind),
]


class RunBudget(StrictModel):
    """What the whole run may spend on LLM calls, read from the usage the providers report: every episode's, and
    those of requests no episode could be tied to. Checked after each episode: once the spend so far is more than a
    budget, the run stops (episodes under way are cancelled), writes its partial results and reports with the
    reason, and exits 5. Usage not reported counts as nothing (the run warns once when tokens or cost is set)."""

    tokens: int | None = Field(None, ge=0, description="The most input + output tokens over every LLM call.")
    cost: float | None = Field(None, ge=0.0, description="The most USD over every LLM call (priced with pricing:).")
    llm_calls: int | None = Field(None, ge=0, description="The most LLM requests (errors and retries count).")

    @field_validator("tokens", "cost", "llm_calls", mode="before")
    @classmethod
    def _a_number(cls, value: Any) -> Any:
        if isinstance(value, bool):  # YAML's yes/true would read as 1
            raise ValueError("must be a number (e.g. llm_calls: 400), not true/false")
        return value

    @model_validator(mode="after")
    def _limits_something(self) -> RunBudget:
        if self.tokens is None and self.cost is None and self.llm_calls is None:
            raise ValueError("a budget that limits nothing: give tokens, cost or llm_calls (e.g. {llm_calls: 400})")
        return self


class RunConfig(StrictModel):
    seed: int = Field(0, description="Seeds every fault decision; the same seed gives the same faults.")
    concurrency: int = Field(
        1,
        ge=1,
        le=64,
        description="Episodes run at once (of any scenarios); needs run.attribution (else one at a time). "
        "With attribution: slots, at most one per slot.",
    )
    replicas: Annotated[Replicas, BeforeValidator(_replicas_shape)] = Field(
        1,
        description="Times each episode (prompt x scenario) runs; or {min, max} (adaptive): more replicas only "
        "where a cell's verdict is still open (needs scoring.min_pass_rate).",
    )
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

    @property
    def adaptive(self) -> AdaptiveReplicas | None:
        return self.replicas if isinstance(self.replicas, AdaptiveReplicas) else None

    @property
    def min_replicas(self) -> int:
        """The replicas every cell gets: N, or the adaptive minimum."""
        return self.replicas.min if isinstance(self.replicas, AdaptiveReplicas) else self.replicas

    @property
    def max_replicas(self) -> int:
        """The most replicas a cell can get: N, or the adaptive maximum."""
        return self.replicas.max if isinstance(self.replicas, AdaptiveReplicas) else self.replicas


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
    replica_aggregation: Literal["all", "majority", "mean", "at_least_k", "pass_at_k", "rate"] = Field(
        "all",
        description="How a cell's replicas combine. rate (with min_pass_rate): PASS when the exact "
        "(Clopper-Pearson) interval of its pass rate is at or above min_pass_rate, FAIL when below, else "
        "INCONCLUSIVE.",
    )
    k: int = Field(1, ge=1, description="For at_least_k and pass_at_k.")
    min_pass_rate: float | None = Field(
        None, gt=0.0, lt=1.0, description="For replica_aggregation: rate: the pass rate a cell must be shown to reach."
    )
    confidence: float = Field(
        0.95,
        gt=0.5,
        lt=1.0,
        description="The confidence of each replicated cell's pass-rate interval (Wilson score interval; "
        "exact Clopper-Pearson under the rate rule, whose false-verdict risk per cell is (1 - confidence) / 2).",
    )

    @model_validator(mode="before")
    @classmethod
    def _flat_weights(cls, value: Any) -> Any:
        return flat_weights(value)

    @model_validator(mode="after")
    def _rate_needs_threshold(self) -> ScoringConfig:
        if self.replica_aggregation == "rate" and self.min_pass_rate is None:
            raise ValueError("replica_aggregation: rate needs scoring.min_pass_rate (e.g. min_pass_rate: 0.8)")
        return self


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
