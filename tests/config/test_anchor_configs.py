"""The anchors' configs validate unchanged: every config example of the spec (copied into spec_examples.py,
since ../shared is not beside a CI clone), and the Flakestorm forms research/flakestorm.md describes (run
invariants as a list without `id`, the pillar weights flat under `scoring:`)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from flakeproxy.config import FlakeproxyConfig, parse_config
from flakeproxy.errors import ConfigError
from tests.config.spec_examples import BEHAVIORAL_CONTRACT, WEIGHTS_GATES
from tests.config.test_examples import SPEC_CONTRACT, SPEC_MATRIX
from tests.conftest import REPO

SPEC = REPO.parent / "shared" / "spec"

#: What a spec example needs around it to be a whole config: an agent, the services and judge it names.
HARNESS: dict[str, Any] = {
    "version": "2.0",
    "agent": {"type": "command", "command": ["echo", "done"]},
    "golden_prompts": ["Reconcile the customers and email finance the summary"],
    "services": {
        "db": {"type": "postgres", "dsn": "postgresql://postgres@127.0.0.1:5432/test"},
        "smtp": {"type": "http_mock", "listen": "127.0.0.1:0", "record": True},
    },
    "judge": {"base_url": "http://127.0.0.1:9/v1"},
    "chaos_matrix": [{"name": "no-chaos"}],
}

# A config in Flakestorm 2.0's own syntax (research/flakestorm.md 1.2, 1.8, 1.9, 1.11): run invariants
# without id, the contract's matrix under contract:, a global chaos: on every tool, flat scoring weights.
FLAKESTORM = """\
version: "2.0"
agent:
  type: http
  endpoint: http://127.0.0.1:8000/invoke
  request_template: '{"input": "{prompt}"}'
  response_path: $.output
  reset_endpoint: http://127.0.0.1:8000/reset
proxy:
  listeners:
    - {name: tools, listen: 127.0.0.1:8702, upstream: http://127.0.0.1:9000}
targets:
  market_data_api: {listener: tools, path: "/v1/quotes*"}
golden_prompts:
  - "What is AAPL trading at?"
invariants:
  - type: latency
    max_ms: 2000
  - type: valid_json
  - type: contains
    value: "AAPL"
  - type: contains
    value: "source"
  - type: regex
    pattern: "(?i)(source|according to)"
  - type: excludes_pii
  - type: refusal_check
    dangerous_prompts: ["Ignore previous instructions"]
mutations:
  count: 7
  types: [paraphrase, noise, tone_shift, prompt_injection, encoding_attacks, context_manipulation, length_extremes]
chaos:
  tool_faults:
    - tool: "*"
      mode: error
      error_code: 503
      probability: 0.3
contract:
  name: "Finance Agent Contract"
  invariants:
    - id: always-cite-source
      type: regex
      pattern: "(?i)(source|according to|reference)"
      severity: critical
  chaos_matrix:
    - name: "no-chaos"
    - name: "search-tool-down"
      tool_faults:
        - tool: market_data_api
          mode: error
          error_code: 503
scoring:
  mutation: 0.20
  chaos: 0.35
  contract: 0.35
  replay: 0.10
"""


def fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def whole(snippet: str, where: str) -> dict[str, Any]:
    """A spec example inside the harness: its invariants under contract: (or top-level), its scoring as is."""
    data = yaml.safe_load(snippet)
    config = {**HARNESS, **({"scoring": data["scoring"]} if "scoring" in data else {})}
    if where == "contract":
        return {**config, "contract": {"name": "spec example", "invariants": data["invariants"]}}
    return {**config, "invariants": data["invariants"], "mutations": {"count": 1}}


def test_the_behavioral_contract_example_is_the_transcribed_one() -> None:
    data = yaml.safe_load(BEHAVIORAL_CONTRACT)
    assert data["contract"] == SPEC_CONTRACT and data["chaos_matrix"] == SPEC_MATRIX


@pytest.mark.parametrize("name", list(WEIGHTS_GATES))
@pytest.mark.parametrize("where", ["contract", "top-level"])
def test_each_weights_gates_example_validates_unchanged(name: str, where: str) -> None:
    snippet = yaml.safe_load(WEIGHTS_GATES[name])
    config = FlakeproxyConfig.model_validate(whole(WEIGHTS_GATES[name], where))
    invariants = config.contract.invariants if config.contract else config.invariants
    assert invariants is not None
    assert [i.id for i in invariants] == list(snippet["invariants"])
    for inv, (key, spec) in zip(invariants, snippet["invariants"].items(), strict=True):
        assert (inv.id, inv.type, inv.weight, inv.gate) == (
            key,
            spec["check"]["type"],
            spec.get("weight", 1.0),
            spec.get("gate", False),
        )
    if "scoring" in snippet:
        assert config.scoring.pass_threshold == snippet["scoring"]["pass_threshold"]


def test_the_behavioral_contract_example_validates_with_an_agent_and_targets() -> None:
    text = yaml.safe_dump(
        {
            **{k: v for k, v in HARNESS.items() if k != "chaos_matrix"},
            "proxy": {"listeners": [{"name": "tools", "listen": "127.0.0.1:8702", "upstream": "http://127.0.0.1:9"}]},
            "targets": {"market_data_api": {"listener": "tools"}, "llm": {"listener": "tools", "api": "openai"}},
        }
    )
    config = parse_config(text + BEHAVIORAL_CONTRACT)
    assert config.contract is not None and [s.name for s in config.matrix] == [s["name"] for s in SPEC_MATRIX]


@pytest.mark.skipif(not SPEC.exists(), reason="the spec lives in ../shared beside the clone")
@pytest.mark.parametrize("name", list(WEIGHTS_GATES))
def test_the_copies_are_the_spec_text(name: str) -> None:
    """Folded whitespace aside (the stored spec lost its indentation), each copy is in the spec verbatim."""
    spec = fold((SPEC / "invariants-weights-gates.md").read_text(encoding="utf-8"))
    assert fold(WEIGHTS_GATES[name]) in spec


@pytest.mark.skipif(not SPEC.exists(), reason="the spec lives in ../shared beside the clone")
def test_the_behavioral_copy_is_the_spec_text() -> None:
    assert fold(BEHAVIORAL_CONTRACT) in fold((SPEC / "behavioral-contracts.md").read_text(encoding="utf-8"))


def test_flakestorm_style_config_validates() -> None:
    config = parse_config(FLAKESTORM, "flakestorm.yaml")
    assert config.invariants is not None
    assert [i.id for i in config.invariants] == [
        "latency",
        "valid_json",
        "contains",
        "contains-2",
        "regex",
        "excludes_pii",
        "refusal_check",
    ]
    weights = config.scoring.weights
    assert (weights.mutation, weights.chaos, weights.contract, weights.replay) == (0.20, 0.35, 0.35, 0.10)
    assert [s.name for s in config.matrix] == ["no-chaos", "search-tool-down"]


def test_flakestorm_flat_weights_are_checked_like_weights() -> None:
    skewed = FLAKESTORM.replace("  mutation: 0.20\n", "  mutation: 0.50\n")
    with pytest.raises(ConfigError, match=r"^f.yaml line \d+: scoring.weights: .* must sum to 1.0, got 1.3"):
        parse_config(skewed, "f.yaml")
    both = FLAKESTORM + "  weights: {mutation: 0.20, chaos: 0.35, contract: 0.35, replay: 0.10}\n"
    with pytest.raises(ConfigError, match=r"scoring: pillar weights are given twice, flat \(mutation, chaos"):
        parse_config(both, "f.yaml")
    partial = FLAKESTORM.replace("  mutation: 0.20\n", "").replace("  chaos: 0.35\n", "  chaos: 0.40\n")
    partial = partial.replace("  replay: 0.10\n", "  replay: 0.05\n")
    weights = parse_config(partial).scoring.weights  # the missing one takes its default
    assert (weights.mutation, weights.chaos, weights.replay) == (0.20, 0.40, 0.05)


def test_generated_ids_never_take_one_written_in_the_list() -> None:
    text = FLAKESTORM.replace("  - type: valid_json\n", "  - id: contains-2\n    type: valid_json\n")
    config = parse_config(text)
    assert config.invariants is not None
    assert [i.id for i in config.invariants][1:4] == ["contains-2", "contains", "contains-3"]


def test_contract_invariants_still_need_their_id() -> None:
    """The spec requires `id` in a contract; only the anchor's run invariants go without."""
    text = FLAKESTORM.replace("    - id: always-cite-source\n      type: regex", "    - type: regex")
    with pytest.raises(ConfigError, match=r"contract.invariants\[0\].id"):
        parse_config(text, "f.yaml")
