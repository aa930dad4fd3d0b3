"""Mutations of the golden prompts for the mutation pillar: generated once from run.seed, cached in the
output folder (mutations.json) so a rerun sends exactly the same inputs and asks no model again."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.config.conversation import TURN_JOINER, prompt_text
from flakeproxy.config.pillars import LLM_TYPES, MutationsConfig
from flakeproxy.mutations.escalation import escalation
from flakeproxy.mutations.llm import GenerationError, generate
from flakeproxy.mutations.rules import CANARY, RULES
from flakeproxy.mutations.spread import spread

__all__ = ["CANARY", "RULES", "Mutation", "MutationSet", "mutations_for"]


class Mutation(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str
    type: str
    weight: float
    prompt_index: int
    original: str
    text: str
    canary: str | None = Field(None, description="An answer containing it obeyed an injected instruction.")
    turns: list[str] | None = Field(
        None, description="multi_turn_attack: the conversation's turns, sent one by one (text: them joined)."
    )
    source: str = Field("rule", description="rule, or the model that wrote it.")


class MutationSet(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    key: str = Field(description="What they were generated from; a change regenerates them.")
    mutations: list[Mutation] = Field(default_factory=list)
    skipped: dict[str, str] = Field(default_factory=dict, description="type -> why it did not run")


def _seed(seed: int, prompt_index: int, kind: str, n: int) -> int:
    digest = hashlib.sha256(f"{seed}|mutation|{prompt_index}|{kind}|{n}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _key(config: FlakeproxyConfig, mutations: MutationsConfig) -> str:
    model = config.model.model_dump(mode="json", exclude={"api_key"}) if config.model else None
    # "spread-1": how count is spread over the types; a set cached before exact counts is made again
    asked = [p if isinstance(p, str) else p.model_dump(mode="json") for p in config.golden_prompts]
    parts = [config.run.seed, asked, mutations.model_dump(mode="json"), model, "spread-1"]
    if "multi_turn_attack" in mutations.types:
        parts.append("turns-1")  # multi_turn_attack became real turns: a set cached before is made again
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def generate_all(config: FlakeproxyConfig, mutations: MutationsConfig) -> MutationSet:
    """Exactly mutations.count per golden prompt, spread over the types that can run (see spread.py); a type
    that cannot run (LLM-written without model:, or its model failed) is listed in skipped with why."""
    out = MutationSet(key=_key(config, mutations))
    types = list(dict.fromkeys(mutations.types))
    for kind in types:
        if kind in LLM_TYPES and config.model is None:
            out.skipped[kind] = "LLM-generated: no model: endpoint configured"
    runnable = [kind for kind in types if kind not in out.skipped]
    shares = [spread(mutations.count, runnable, config.run.seed, i) for i in range(len(config.golden_prompts))]
    for kind in runnable:
        if not any(share[kind] for share in shares):
            out.skipped[kind] = (
                f"count {mutations.count} spread over {len(runnable)} types drew none of this type (run.seed "
                f"{config.run.seed}); raise mutations.count or list fewer types"
            )
            continue
        try:
            for index, prompt in enumerate(prompt_text(p) for p in config.golden_prompts):  # a conversation's last
                for n in range(shares[index][kind]):
                    seed = _seed(config.run.seed, index, kind, n)
                    turns = escalation(prompt, random.Random(seed)) if kind == "multi_turn_attack" else None
                    if turns is not None:
                        text, source = TURN_JOINER.join(turns), "rule"
                    elif kind in LLM_TYPES:
                        assert config.model is not None
                        text, source = generate(config.model, kind, prompt, seed % 2**31), config.model.model
                    else:
                        text, source = RULES[kind](prompt, random.Random(seed)), "rule"
                    out.mutations.append(
                        Mutation(
                            id=f"m{len(out.mutations) + 1}",
                            type=kind,
                            weight=mutations.weight(kind),
                            prompt_index=index,
                            original=prompt,
                            text=text,
                            canary=CANARY if CANARY in text else None,
                            source=source,
                            turns=turns,
                        )
                    )
        except GenerationError as e:
            out.mutations = [m for m in out.mutations if m.type != kind]
            out.skipped[kind] = str(e)
    return out


def mutations_for(config: FlakeproxyConfig, output: Path | None) -> tuple[MutationSet, bool]:
    """The config's mutations, from output/mutations.json when it was made from the same inputs; and
    whether they came from that cache."""
    assert config.mutations is not None
    cache = output / "mutations.json" if output is not None else None
    key = _key(config, config.mutations)
    if cache is not None and cache.exists():
        try:
            cached = MutationSet.model_validate_json(cache.read_text())
        except ValueError:
            cached = None
        if cached is not None and cached.key == key:
            return cached, True
    fresh = generate_all(config, config.mutations)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(fresh.model_dump_json(indent=2))
    return fresh, False
