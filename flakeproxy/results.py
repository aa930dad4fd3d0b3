"""Results of a contract run: versioned, every cell with its outcome, reason, evidence and faults."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1"
Outcome = Literal["pass", "fail", "error", "not_applicable"]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PromptResult(Model):
    prompt: str
    answer: str | None
    latency_ms: float
    error: str | None = None
    outcome: Outcome
    reason: str
    score: float = 0.0
    evidence: dict[str, Any] = Field(default_factory=dict)


class CellResult(Model):
    cell_id: str | None = None
    invariant: str
    type: str
    scenario: str
    severity: str
    when: str
    outcome: Outcome
    reason: str
    prompts: list[PromptResult] = Field(default_factory=list)
    faults_injected: list[dict[str, Any]] = Field(default_factory=list)
    journal: list[dict[str, Any]] = Field(default_factory=list)
    unattributed_requests: int = 0
    score: float = Field(0.0, description="In [0, 1]: the mean of its prompts' scores (an error scores 0).")
    replicas: list[Outcome] = Field(default_factory=list, description="Each replica's outcome (run.replicas > 1).")
    flaky: bool = False
    pass_at_k: float | None = None
    pass_hat_k: float | None = None


class Composite(Model):
    composite: float
    passed: bool
    gate_failed: list[str] = Field(default_factory=list)


class Score(Model):
    resilience: float | None = Field(description="The spec's severity-weighted pass rate, 0-100.")
    composite: dict[str, Composite] = Field(
        default_factory=dict, description="Per scenario: sum(weight x score) / sum(weight); a failed gate -> 0."
    )
    passed: bool
    verdict: Literal["PASS", "FAIL"]
    reasons: list[str] = Field(default_factory=list, description="Why it failed.")
    counts: dict[str, int] = Field(default_factory=dict)


class RunResult(Model):
    schema_version: str = SCHEMA_VERSION
    flakeproxy_version: str
    versions: dict[str, str]
    config_path: str
    config_sha256: str
    contract: str
    seed: int
    started_at: str
    finished_at: str | None = None
    complete: bool = False
    interrupted_by: str | None = None
    warnings: list[str] = Field(default_factory=list)
    scenarios: list[str] = Field(default_factory=list)
    invariants: list[str] = Field(default_factory=list)
    score: Score | None = None
    cells: list[CellResult] = Field(default_factory=list)
