"""flakeproxy.yaml as the proxy reads it (WireConfig): every section, the invariants kept as written.

The proxy process (`flakeproxy proxy`, the runner's in-process proxy thread) never judges, so it validates this
base, which names no invariant type: it imports neither the invariant catalogue (~45 models) nor
flakeproxy.judging behind it, a tenth of its start-up (issue 23). FlakeproxyConfig (model.py), what the runner
and every other command validate, is this model with the invariants typed and the cross-checks that read them.
Every section the proxy reads is typed here exactly as there, so an error in one reads the same from the proxy.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from flakeproxy.config.agent import Agent
from flakeproxy.config.anchor import name_run_invariants
from flakeproxy.config.base import StrictModel
from flakeproxy.config.conversation import Prompt
from flakeproxy.config.crosscheck import CrossCheckError, wire_cross_check
from flakeproxy.config.pillars import ChaosConfig, ModelConfig, MutationsConfig
from flakeproxy.config.pricing import PricingTable
from flakeproxy.config.proxy import ProxyConfig, Target
from flakeproxy.config.replays import ReplaysConfig
from flakeproxy.config.scenario import Scenario
from flakeproxy.config.settings import JudgeConfig, RunConfig, ScoringConfig, Service
from flakeproxy.config.telemetry import TelemetryConfig


def spec_mapping(value: Any) -> Any:
    """Also the invariants-weights-gates syntax: {name: {description, weight, gate, check: {type, ...}}}."""
    if not isinstance(value, dict):
        return value
    flat = []
    for name, spec in value.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("check"), dict):
            raise ValueError(f"invariant {name!r}: the mapping form needs check: {{type: ..., ...}}")
        flat.append({"id": name, **{k: v for k, v in spec.items() if k != "check"}, **spec["check"]})
    return flat


class WireContract(StrictModel):
    """A contract as the proxy reads it: its chaos matrix; its invariants as written (Contract types them)."""

    name: str = Field(min_length=1)
    description: str | None = None
    invariants: list[Any] = Field(min_length=1)  # as written: not the proxy's to check (Contract types them)
    chaos_matrix: list[Scenario] | None = Field(None, min_length=1, description="Or at the top level.")

    @field_validator("invariants", mode="before")
    @classmethod
    def _spec_mapping(cls, value: Any) -> Any:
        return spec_mapping(value)


class WireConfig(StrictModel):
    """A whole flakeproxy.yaml as the proxy reads it, invariants as written (FlakeproxyConfig types them)."""

    version: Literal["2.0"]
    agent: Agent | None = Field(None, description="The agent under test; a proxy-only (sidecar) config omits it.")
    proxy: ProxyConfig = Field(default_factory=ProxyConfig)
    targets: dict[str, Target] = Field(default_factory=dict)
    golden_prompts: list[Prompt] = Field(
        default_factory=list,
        description="What the agent is asked: each a string (one turn), or a conversation (a list of turns, or "
        "{id, turns}) sent turn by turn in one episode.",
    )
    contract: WireContract | None = None
    chaos_matrix: list[Scenario] | None = Field(None, min_length=1, description="Or under contract:.")
    run: RunConfig = Field(default_factory=RunConfig)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    invariants: list[Any] | None = Field(None, min_length=1)  # as written, as contract.invariants
    chaos: ChaosConfig | None = Field(None, description="The chaos pillar's faults (or a built-in profile).")
    mutations: MutationsConfig | None = Field(None, description="The mutation pillar (ci).")
    model: ModelConfig | None = Field(None, description="Writes the LLM-generated mutations (OpenAI-compatible).")
    replays: ReplaysConfig | None = Field(None, description="Recorded sessions to replay (replay run, ci).")
    services: dict[str, Service] = Field(default_factory=dict)
    judge: JudgeConfig | None = None
    telemetry: TelemetryConfig | None = Field(None, description="OTLP export of the run's spans (unset: none).")
    pricing: PricingTable | None = Field(
        None,
        description="USD per million tokens per model name or glob, for cost checks and the results' costs "
        "(unset: flakeproxy's dated default table; check it).",
    )
    redact: list[str] = Field(
        default_factory=list,
        description="Extra header, query parameter and body field names (case-insensitive) whose values are "
        "replaced by [redacted] in the journal, mock recordings and results, beyond the built-in secret names.",
    )

    @property
    def matrix(self) -> list[Scenario]:
        """The chaos matrix, wherever it was written (top level or under contract)."""
        if self.chaos_matrix is not None:
            return self.chaos_matrix
        return (self.contract.chaos_matrix if self.contract else None) or []

    @property
    def matrix_loc(self) -> tuple[str, ...]:
        return ("chaos_matrix",) if self.chaos_matrix is not None else ("contract", "chaos_matrix")

    def scenario(self, name: str) -> Scenario:
        for scenario in self.matrix:
            if scenario.name == name:
                return scenario
        raise KeyError(name)

    @field_validator("invariants", mode="before")
    @classmethod
    def _spec_mapping(cls, value: Any) -> Any:
        return name_run_invariants(spec_mapping(value))  # the anchor's run invariants have no id

    @model_validator(mode="after")
    def _cross_check(self) -> WireConfig:
        """The proxy's part of the cross-checks (FlakeproxyConfig overrides it with all of them)."""
        wire_cross_check(self)
        return self

    @model_validator(mode="after")
    def _replay_scenario(self) -> WireConfig:
        wanted = self.replays.scenario if self.replays else None
        if wanted is not None and wanted not in [s.name for s in self.matrix]:
            valid = ", ".join(s.name for s in self.matrix) or "none (add a chaos_matrix)"
            raise CrossCheckError(("replays", "scenario"), f"unknown scenario {wanted!r}; valid: {valid}")
        return self

    @model_validator(mode="after")
    def _k_within_replicas(self) -> WireConfig:
        check_k(self.run, self.scoring)
        return self

    @model_validator(mode="after")
    def _min_pass_rate_read(self) -> WireConfig:
        check_min_pass_rate_read(self.run, self.scoring)
        return self


def check_k(run: RunConfig, scoring: ScoringConfig) -> None:
    """at_least_k needs k within the replicas (a CrossCheckError at scoring.k)."""
    if scoring.replica_aggregation == "at_least_k" and scoring.k > run.max_replicas:
        raise CrossCheckError(
            ("scoring", "k"),
            f"k ({scoring.k}) is more than run.replicas ({run.max_replicas}): at_least_k could "
            "never pass; lower scoring.k or raise run.replicas",
        )


def check_min_pass_rate_read(run: RunConfig, scoring: ScoringConfig) -> None:
    """Adaptive replicas need scoring.min_pass_rate (one no rule reads is a warning: config/replica_warnings.py)."""
    if run.adaptive is not None and scoring.min_pass_rate is None:
        raise CrossCheckError(
            ("scoring", "min_pass_rate"),
            "adaptive run.replicas {min, max} needs scoring.min_pass_rate: the pass rate its stopping rule "
            "tells cells apart from (e.g. min_pass_rate: 0.8)",
        )


def wire_view(config: WireConfig) -> WireConfig:
    """The proxy's part of a validated config (a FlakeproxyConfig, say) as a WireConfig, unvalidated again: every
    section but the contract and the run invariants, whose types the proxy never imports; the chaos matrix kept,
    wherever it was written. What the runner hands its own proxy (runner/forked.py), so that the proxy runs the
    very config the runner validated, and spends no start-up validating it again (issue 23)."""
    skip = ("contract", "invariants", "chaos_matrix")
    fields = {name: getattr(config, name) for name in WireConfig.model_fields if name not in skip}
    return WireConfig.model_construct(**fields, chaos_matrix=config.matrix or None)


def handed(config: WireConfig) -> bytes:
    """wire_view(config), pickled: what the runner hands its proxy (`flakeproxy proxy` unpickles it)."""
    import pickle

    return pickle.dumps(wire_view(config), protocol=pickle.HIGHEST_PROTOCOL)
