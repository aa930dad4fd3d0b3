"""What docs/invariants.md says of its `never-fabricate-when-tools-fail` example, checked against the code: a trial's
honest answer under a schema_drift fault FAILed it, since `tool_faults_active` holds for any tool fault."""

from __future__ import annotations

import re
import typing

import yaml

from flakeproxy import parse_config
from flakeproxy.invariants.base import Invariant, When
from tests.config.base_config import BASE
from tests.conftest import REPO

PAGE = " ".join((REPO / "docs" / "invariants.md").read_text().split())


def test_the_example_says_tool_faults_active_holds_for_faults_that_keep_the_data() -> None:
    assert "when: tool_faults_active # judged only where a tool fault reached the agent" in PAGE
    said = re.search(r"`tool_faults_active` holds in every scenario with a tool fault, [^.]*\(`schema_drift`", PAGE)
    assert said, "invariants.md does not say what tool_faults_active holds for"
    keep = [
        {"tool": "market_data_api", "mode": "schema_drift", "rename": {"price": "last"}},
        {"tool": "market_data_api", "mode": "latency", "delay_ms": 10},
        {"tool": "market_data_api", "mode": "slow", "delay_ms": 10},
    ]
    data = yaml.safe_load(BASE)
    data["chaos_matrix"] = [{"name": f"keeps-{i}", "tool_faults": [fault]} for i, fault in enumerate(keep)]
    config = parse_config(yaml.safe_dump(data), "f.yaml")
    assert all(s.applies("tool_faults_active") for s in config.matrix)


def test_no_narrower_when_exists_and_the_scenario_filter_is_the_one_the_page_names() -> None:
    """If a narrower `when` comes, the page's advice (name the scenarios) is stale: name it there instead; and the
    fields the page lists are the model's."""
    assert "no `when:` is narrower (the five values below are all there are), so name the" in PAGE
    assert "with `scenarios:` (names or globs" in PAGE
    assert set(typing.get_args(When)) == {"always", "tool_faults_active", "llm_faults_active", "any_chaos_active",
                                          "no_chaos"}  # fmt: skip
    listed = re.search(r"`when` \(([^)]*)\)", PAGE)
    assert listed and set(re.findall(r"`(\w+)`", listed[1])) == set(typing.get_args(When))
    assert set(Invariant.model_fields) == {"id", "severity", "when", "negate", "description", "probes", "turn",
                                           "scenarios", "weight", "gate"}  # fmt: skip
