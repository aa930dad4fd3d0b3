"""mutations.count is honoured: exactly count mutations per golden prompt, spread over the types that can run
by a seeded draw (issue 22: `count: 6` used to run 11, one per rule-based type)."""

from __future__ import annotations

from collections import Counter

import pytest

from flakeproxy.config import parse_config
from flakeproxy.config.pillars import LLM_TYPES, RULE_TYPES
from flakeproxy.mutations import MutationSet, generate_all
from flakeproxy.mutations.spread import spread

CONFIG = """\
version: "2.0"
agent: {type: command, command: [echo, hi]}
golden_prompts: ["What is AAPL trading at?", "And MSFT?"]
invariants: [{type: completes}]
mutations: MUTATIONS
run: {seed: SEED}
"""


def generated(mutations: str, seed: int = 7) -> MutationSet:
    config = parse_config(CONFIG.replace("MUTATIONS", mutations).replace("SEED", str(seed)))
    assert config.mutations is not None
    return generate_all(config, config.mutations)


@pytest.mark.parametrize("count", [1, 6, 11, 15, 23])
def test_exactly_count_per_golden_prompt_over_the_rule_types(count: int) -> None:
    result = generated(f"{{count: {count}}}")
    per_prompt = Counter(m.prompt_index for m in result.mutations)
    assert per_prompt == {0: count, 1: count}
    for index in (0, 1):
        kinds = Counter(m.type for m in result.mutations if m.prompt_index == index)
        assert set(kinds) <= set(RULE_TYPES)  # no model: the LLM-written types are skipped, not counted
        base = count // len(RULE_TYPES)
        assert all(n in (base, base + 1) for n in kinds.values())
        assert sum(n == base + 1 for n in kinds.values()) == count % len(RULE_TYPES)
    assert all("no model: endpoint" in result.skipped[kind] for kind in LLM_TYPES)


def test_count_six_runs_six_and_says_which_types_drew_none() -> None:
    result = generated("{count: 6}")
    assert len(result.mutations) == 12  # 6 for each of the 2 golden prompts, not 11 each
    ran = {m.type for m in result.mutations}
    none = [kind for kind in RULE_TYPES if kind not in ran]
    assert none, "6 per prompt over 11 types cannot reach every type for 2 prompts here"
    for kind in none:
        assert result.skipped[kind].startswith("count 6 spread over 11 types drew none of this type (run.seed 7)")


def test_the_draw_is_seeded() -> None:
    first, again = generated("{count: 6}", seed=7), generated("{count: 6}", seed=7)
    assert [m.text for m in first.mutations] == [m.text for m in again.mutations]
    draws = {tuple(sorted(spread(6, list(RULE_TYPES), seed, 0).items())) for seed in range(20)}
    assert len(draws) > 1, "the seed decides which types get the extra mutations"


def test_spread_sums_to_count_and_keeps_the_type_order() -> None:
    types = ["noise", "prompt_injection", "temporal_attack"]
    share = spread(7, types, seed=3, prompt_index=1)
    assert list(share) == types and sum(share.values()) == 7 and sorted(share.values()) == [2, 2, 3]
    assert spread(5, [], seed=3, prompt_index=0) == {}


def test_listed_types_only_and_a_duplicate_counts_once() -> None:
    result = generated("{count: 4, types: [noise, noise, prompt_injection]}")
    assert Counter(m.type for m in result.mutations if m.prompt_index == 0) == {"noise": 2, "prompt_injection": 2}
