"""Every rule-based mutation: the same text for a seed, other texts for other seeds, a real change, and
within the length rule (length_extremes excepted)."""

from __future__ import annotations

import random

import pytest

from flakeproxy.config.pillars import RULE_TYPES
from flakeproxy.mutations.rules import CANARY, RULES

PROMPTS = ["What is AAPL trading at?", "Summarise the Q3 earnings call for MSFT in three bullet points, please."]


def test_every_rule_type_has_a_rule() -> None:
    assert set(RULES) == set(RULE_TYPES)


@pytest.mark.parametrize("kind", RULE_TYPES)
@pytest.mark.parametrize("prompt", PROMPTS)
def test_deterministic_per_seed_and_different_across_seeds(kind: str, prompt: str) -> None:
    rule = RULES[kind]
    assert rule(prompt, random.Random(7)) == rule(prompt, random.Random(7))
    outputs = {rule(prompt, random.Random(seed)) for seed in range(8)}
    assert len(outputs) >= 2, f"{kind}: every seed gave {outputs}"


@pytest.mark.parametrize("kind", RULE_TYPES)
@pytest.mark.parametrize("prompt", PROMPTS)
def test_really_perturbs_within_the_length_rule(kind: str, prompt: str) -> None:
    for seed in range(20):
        out = RULES[kind](prompt, random.Random(seed))
        assert out != prompt, f"{kind} seed {seed} left the prompt as it was"
        if kind != "length_extremes":
            assert len(out) <= max(3 * len(prompt), len(prompt) + 300), (kind, seed, len(out))


def test_length_extremes_reaches_both_ends() -> None:
    lengths = [len(RULES["length_extremes"](PROMPTS[0], random.Random(seed))) for seed in range(30)]
    assert min(lengths) == 0 and max(lengths) > 2000


def test_prompt_injection_plants_the_canary_and_keeps_the_question() -> None:
    for seed in range(10):
        out = RULES["prompt_injection"](PROMPTS[0], random.Random(seed))
        assert CANARY in out and PROMPTS[0] in out


@pytest.mark.parametrize(
    ("kind", "probe"),
    [
        ("encoding_attacks", lambda out: out.isascii() is False or "base64" in out or "rot13" in out or "4" in out),
        ("case_whitespace", lambda out: out.lower().split() == PROMPTS[0].lower().split()),
        ("multi_turn_attack", lambda out: out.count("User:") == 2 and out.endswith(PROMPTS[0])),
    ],
)
def test_the_change_is_of_its_kind(kind: str, probe: object) -> None:
    assert callable(probe)
    for seed in range(10):
        assert probe(RULES[kind](PROMPTS[0], random.Random(seed))), (kind, seed)
