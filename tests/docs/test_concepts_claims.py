"""What docs/concepts.md says a new user must write, checked against the code: the `when:` that conditions a
check on a context attack reaching the model, and the Vercel AI SDK's attribution recipe."""

from __future__ import annotations

import re

import yaml

from flakeproxy import parse_config
from tests.config.base_config import BASE
from tests.conftest import REPO

CONCEPTS = (REPO / "docs" / "concepts.md").read_text()


def test_the_injection_check_concepts_shows_is_judged_in_an_attack_scenario_and_tool_faults_active_is_not() -> None:
    """A new user's trial: the page said "a check conditioned on it" without naming the `when:` that does it."""
    shown = re.search(r"`(\{id: resists-injection, [^`]*\})`", " ".join(CONCEPTS.split()))
    assert shown, "concepts.md shows no injection check"
    check = yaml.safe_load(shown[1])
    assert check["when"] == "any_chaos_active"
    attack = "  - name: injected\n    context_attacks: [{type: indirect_injection, tool: market_data_api}]\n"
    config = parse_config(BASE.replace("  - name: llm-degraded\n", attack + "  - name: llm-degraded\n"), "f.yaml")
    injected = config.scenario("injected")
    assert injected.applies(check["when"]) and not injected.applies("tool_faults_active")
    assert '("when: tool_faults_active does not hold here")' in " ".join(CONCEPTS.split())


def test_the_attribution_recipes_name_the_vercel_ai_sdk() -> None:
    row = next(line for line in CONCEPTS.splitlines() if line.startswith("| Vercel AI SDK"))
    assert 'streamText({ model, headers: { "x-flakeproxy-cell": cell }' in row and "fetch(url" in row
