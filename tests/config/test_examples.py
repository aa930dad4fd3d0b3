"""The bundled example configs validate, and the finance one is the spec's contract unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from flakeproxy import load_config
from tests.conftest import EXAMPLES, REPO

FINANCE = REPO / "examples" / "finance-contract.yaml"
SPEC = REPO.parent / "shared" / "spec" / "behavioral-contracts.md"

# The spec's example, transcribed (spec/behavioral-contracts.md, "Configuration").
SPEC_CONTRACT = {
    "name": "Finance Agent Contract",
    "description": "Invariants that must hold under all failure conditions",
    "invariants": [
        {
            "id": "always-cite-source",
            "type": "regex",
            "pattern": "(?i)(source|according to|reference)",
            "severity": "critical",
            "when": "always",
            "description": "Must always cite a data source",
        },
        {
            "id": "never-fabricate-when-tools-fail",
            "type": "regex",
            "pattern": "\\\\$[\\\\d,]+\\\\.\\\\d{2}",
            "negate": True,
            "severity": "critical",
            "when": "tool_faults_active",
            "description": "Must not return dollar figures when tools are failing",
        },
        {"id": "max-latency", "type": "latency", "max_ms": 60000, "severity": "medium", "when": "always"},
    ],
}
SPEC_MATRIX = [
    {"name": "no-chaos", "tool_faults": [], "llm_faults": []},
    {
        "name": "search-tool-down",
        "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}],
    },
    {"name": "llm-degraded", "llm_faults": [{"mode": "truncated_response", "max_tokens": 20}]},
]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_validates(path: Path) -> None:
    config = load_config(path)
    assert config.version == "2.0"


def test_examples_exist() -> None:
    assert FINANCE in EXAMPLES


def test_finance_example_holds_the_spec_contract_unchanged() -> None:
    raw = yaml.safe_load(FINANCE.read_text())
    assert raw["contract"] == SPEC_CONTRACT
    assert raw["chaos_matrix"] == SPEC_MATRIX


@pytest.mark.skipif(not SPEC.exists(), reason="the spec lives in ../shared beside the clone")
def test_finance_example_text_appears_verbatim_in_the_spec() -> None:
    """The spec is stored as one line: compare with whitespace folded."""
    text = FINANCE.read_text()
    section = text[text.index("\ncontract:") : text.index("\nrun:")]
    fold = lambda s: re.sub(r"\s+", " ", s).strip()  # noqa: E731
    assert fold(section) in fold(SPEC.read_text())


def test_finance_example_parses_into_models() -> None:
    config = load_config(FINANCE)
    assert config.contract is not None
    assert [s.name for s in config.matrix] == ["no-chaos", "search-tool-down", "llm-degraded"]
    never = config.contract.invariants[1]
    assert never.negate and never.when == "tool_faults_active"
    assert [s.applies(never.when) for s in config.matrix] == [False, True, False]
