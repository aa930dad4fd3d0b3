"""The ci sections of the config: top-level invariants, chaos (faults or a profile), mutations, model."""

from __future__ import annotations

import pytest

from flakeproxy import ConfigError, parse_config
from flakeproxy.planning.profiles import PROFILES, chaos_scenario, profile_scenario
from tests.config.base_config import BASE

INVARIANTS = "invariants:\n  - {id: answers, type: completes}\n"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("chaos: {profile: api_outage}\n", r"line \d+: chaos: the chaos pillar is judged by top-level invariants"),
        ("mutations: {count: 3}\n", r"mutations: the mutation pillar is judged by top-level invariants"),
        (INVARIANTS + "chaos: {profile: outage}\n", r"chaos.profile: .*unknown profile 'outage'; valid: api_outage"),
        (INVARIANTS + "chaos: {}\n", r"chaos: .*chaos needs a profile or at least one fault"),
        (INVARIANTS + "mutations: {types: [typos]}\n", r"mutations.types\[0\]: .*'typos'"),
        (
            INVARIANTS + "chaos: {tool_faults: [{tool: nope, mode: error}]}\n",
            r"chaos.tool_faults\[0\].tool: tool 'nope' is not one of the targets",
        ),
        ("invariants:\n  - {id: a, type: completes}\n  - {id: a, type: completes}\n", r"duplicate invariant id 'a'"),
    ],
)
def test_bad_ci_sections_are_one_line(extra: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        parse_config(BASE + extra, "f.yaml")
    assert "\n" not in str(caught.value)


def test_the_spec_mapping_syntax_works_for_top_level_invariants() -> None:
    text = BASE + "invariants:\n  answers:\n    description: answers\n    weight: 2\n    check: {type: completes}\n"
    config = parse_config(text, "f.yaml")
    assert config.invariants is not None and config.invariants[0].id == "answers" and config.invariants[0].weight == 2


def test_every_profile_is_a_valid_scenario_and_resolves_against_a_config() -> None:
    config = parse_config(BASE + INVARIANTS + "chaos: {profile: hostile_tools}\n", "f.yaml")
    for name in PROFILES:
        assert profile_scenario(name).any_chaos_active
    scenario, notes = chaos_scenario(config)
    assert scenario.name == "chaos:hostile_tools" and scenario.tool_faults and notes == []


def test_a_profile_drops_what_cannot_reach_anything_and_says_so() -> None:
    llm_only = BASE.replace('  market_data_api: {listener: tools, path: "/v1/quotes*", method: GET}\n', "")
    llm_only = llm_only.replace(
        "  - name: tool-down\n    tool_faults:\n      - tool: market_data_api\n        mode: error\n"
        "        error_code: 503\n",
        "",
    )
    config = parse_config(llm_only + INVARIANTS + "chaos: {profile: api_outage}\n", "f.yaml")
    scenario, notes = chaos_scenario(config)
    assert scenario.tool_faults == [] and scenario.llm_faults
    assert notes == ["profile api_outage: its tool faults were dropped: the config has no tool target"]
