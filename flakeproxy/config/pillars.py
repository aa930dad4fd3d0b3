"""The sections of the other pillars of `flakeproxy ci`: top-level chaos, mutations, the mutation model."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, field_validator, model_validator

from flakeproxy.config.base import HttpUrl, StrictModel
from flakeproxy.config.scenario import Scenario

MutationType = Literal[
    "noise",
    "case_whitespace",
    "encoding_attacks",
    "length_extremes",
    "prompt_injection",
    "format_poisoning",
    "context_manipulation",
    "language_mixing",
    "token_manipulation",
    "temporal_attack",
    "multi_turn_attack",
    "paraphrase",
    "tone_shift",
    "semantic_similarity_attack",
    "advanced_jailbreak",
]
LLM_TYPES: tuple[MutationType, ...] = ("paraphrase", "tone_shift", "semantic_similarity_attack", "advanced_jailbreak")
RULE_TYPES: tuple[MutationType, ...] = tuple(t for t in get_args(MutationType) if t not in LLM_TYPES)
#: Default per-type weights (the anchor's, where it has the type; case_whitespace is ours).
DEFAULT_WEIGHTS: dict[str, float] = {
    "paraphrase": 1.0,
    "noise": 0.8,
    "case_whitespace": 0.8,
    "tone_shift": 0.9,
    "prompt_injection": 1.5,
    "encoding_attacks": 1.3,
    "context_manipulation": 1.1,
    "length_extremes": 1.2,
    "multi_turn_attack": 1.4,
    "advanced_jailbreak": 2.0,
    "semantic_similarity_attack": 1.3,
    "format_poisoning": 1.6,
    "language_mixing": 1.2,
    "token_manipulation": 1.5,
    "temporal_attack": 1.1,
}


class ChaosConfig(Scenario):
    """Top-level `chaos:`: faults for the chaos pillar, written like a scenario, or a built-in `profile`."""

    name: str = Field("chaos", min_length=1)
    profile: str | None = Field(None, description="A built-in profile (flakeproxy profiles lists them).")

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str | None) -> str | None:
        from flakeproxy.planning.profiles import PROFILES

        if value is not None and value not in PROFILES:
            raise ValueError(f"unknown profile {value!r}; valid: {', '.join(sorted(PROFILES))}")
        return value

    def scenario(self) -> Scenario:
        """The profile's faults followed by the ones written here, as one scenario."""
        from flakeproxy.planning.profiles import profile_scenario

        own = Scenario(
            name=self.name if self.name != "chaos" or not self.profile else f"chaos:{self.profile}",
            description=self.description,
            tool_faults=self.tool_faults,
            llm_faults=self.llm_faults,
            context_attacks=self.context_attacks,
        )
        if self.profile is None:
            return own
        base = profile_scenario(self.profile)
        return own.model_copy(
            update={
                "tool_faults": [*base.tool_faults, *own.tool_faults],
                "llm_faults": [*base.llm_faults, *own.llm_faults],
                "context_attacks": [*base.context_attacks, *own.context_attacks],
                "description": own.description or base.description,
            }
        )

    @model_validator(mode="after")
    def _something(self) -> ChaosConfig:
        if self.profile is None and not self.any_chaos_active:
            raise ValueError("chaos needs a profile or at least one fault (tool_faults, llm_faults, context_attacks)")
        return self


class MutationsConfig(StrictModel):
    """The mutation pillar: variants of each golden prompt, generated once from run.seed and cached."""

    count: int = Field(
        15,
        ge=1,
        le=200,
        description="Exactly this many mutations per golden prompt, spread over the types that can run: count // n "
        "each, and one more for count % n of them drawn with run.seed (the same seed, the same types).",
    )
    types: list[MutationType] = Field(
        default_factory=lambda: [*RULE_TYPES, *LLM_TYPES],
        min_length=1,
        description="Which types to generate; LLM types need model: and are skipped (and said so) without it.",
    )
    weights: dict[MutationType, float] = Field(
        default_factory=dict,
        description="Per-type weight in the robustness score (defaults: docs/reference/mutations.md).",
    )

    def weight(self, kind: str) -> float:
        return float(self.weights.get(kind, DEFAULT_WEIGHTS[kind]))  # type: ignore[call-overload]


class ModelConfig(StrictModel):
    """An OpenAI-compatible endpoint that writes the LLM-generated mutations."""

    base_url: HttpUrl = Field(description="e.g. http://127.0.0.1:11434/v1 (the /chat/completions is added).")
    model: str = Field(min_length=1)
    api_key: str | None = Field(None, description="e.g. ${OPENAI_API_KEY}; sent as a bearer token.")
    timeout_ms: int = Field(60000, ge=1)
