"""run.isolation, run.attribution, at_least_k within replicas, and `contract validate` checking what run checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flakeproxy import ConfigError, parse_config
from flakeproxy.planning.checks import plan_contract
from tests.config.base_config import BASE, edit


def test_defaults_are_episodes_without_attribution() -> None:
    config = parse_config(BASE, "f.yaml")
    assert config.run.isolation == "episode" and config.run.attribution == "none"


def test_at_least_k_more_than_replicas_is_a_config_error() -> None:
    text = BASE + "run: {replicas: 2}\n"
    text = text.replace("scoring:\n", "scoring:\n  replica_aggregation: at_least_k\n  k: 3\n")
    with pytest.raises(ConfigError, match=r"line \d+: scoring.k: k \(3\) is more than run.replicas \(2\)"):
        parse_config(text, "f.yaml")
    ok = text.replace("k: 3", "k: 2")
    assert parse_config(ok, "f.yaml").scoring.k == 2


@pytest.mark.parametrize(
    ("scoring", "message"),
    [
        ("  replica_aggregation: rate\n", r"line \d+: scoring: replica_aggregation: rate needs scoring.min_pass_rate"),
        (
            "  replica_aggregation: rate\n  min_pass_rate: 1.0\n",
            r"line \d+: scoring.min_pass_rate: must be < 1.0, got 1.0",
        ),
    ],
)
def test_the_rate_rule_needs_a_threshold_between_0_and_1(scoring: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(BASE.replace("scoring:\n", "scoring:\n" + scoring), "f.yaml")
    ok = BASE.replace("scoring:\n", "scoring:\n  replica_aggregation: rate\n  min_pass_rate: 0.8\n")
    assert parse_config(ok, "f.yaml").scoring.min_pass_rate == 0.8


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("run: {replicas: {min: 5, max: 2}}\n", r"run.replicas: replicas min \(5\) is more than max \(2\)"),
        ("run: {replicas: {min: 2, max: 30}}\n", r"scoring.min_pass_rate: adaptive run.replicas \{min, max\} needs"),
        (
            "run: {replicas: {min: 2, max: 30, each: 2}}\n",
            r"run.replicas.each: unknown key .each.; valid keys: min, max, every",
        ),
    ],
)
def test_adaptive_replicas_are_checked(run: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(BASE + run, "f.yaml")
    text = BASE.replace("scoring:\n", "scoring:\n  min_pass_rate: 0.8\n") + "run: {replicas: {max: 12}}\n"
    ok = parse_config(text, "f.yaml")
    assert (ok.run.min_replicas, ok.run.max_replicas, ok.run.adaptive is not None) == (2, 12, True)
    assert ok.scoring.replica_aggregation == "all"  # the stopping rule reads min_pass_rate; `all` judges


def test_unknown_isolation_names_the_choices() -> None:
    with pytest.raises(ConfigError, match=r"run.isolation.*episode.*cell"):
        parse_config(BASE + "run: {isolation: per-cell}\n", "f.yaml")


def test_plan_counts_agent_invocations() -> None:
    plan = plan_contract(parse_config(BASE, "f.yaml"), "f.yaml")
    # 2 invariants x 3 scenarios; 1 prompt x 3 scenarios, plus one calm repeat of the first prompt that
    # tells a stateful agent (BASE configures no reset)
    assert (plan.cells, plan.episodes) == (6, 4)
    cells = plan_contract(parse_config(BASE + "run: {isolation: cell}\n", "f.yaml"), "f.yaml")
    assert cells.episodes == 7
    reset = BASE.replace(
        "  timeout_ms: 30000\n", "  timeout_ms: 30000\n  reset_endpoint: http://127.0.0.1:8000/reset\n"
    )
    assert plan_contract(parse_config(reset, "f.yaml"), "f.yaml").episodes == 3
    # a 3-turn conversation: one episode per scenario, three paid invocations each (a new user's finding)
    talk = reset.replace('golden_prompts: ["What', 'golden_prompts: [[first, second, third], "What', 1)
    both = plan_contract(parse_config(talk, "f.yaml"), "f.yaml")
    assert (both.episodes, both.invocations) == (6, 12)


def test_contract_validate_rejects_what_contract_run_would(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(edit('golden_prompts: ["What is AAPL trading at?"]', "golden_prompts: []"))
    out = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "contract", "validate", "-c", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 2 and "golden_prompts: empty" in out.stderr and len(out.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("run", "extra", "says"),
    [
        ("run: {concurrency: 4}\n", "", "set run.attribution: trace"),
        ("run: {concurrency: 4, attribution: header}\n", "", None),
        (
            "run: {concurrency: 4, attribution: header}\n",
            "    - {id: out, type: file_exists, path: out.json}\n",
            "out read(s) the workspace or a service",
        ),
        ("run: {concurrency: 1}\n", "", None),
    ],
)
def test_validate_says_when_concurrency_will_be_ignored(tmp_path: Path, run: str, extra: str, says: str | None) -> None:
    path = tmp_path / "f.yaml"
    text = BASE + run
    if extra:
        text = text.replace("    - id: fast\n", extra + "    - id: fast\n")
    path.write_text(text)
    out = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "contract", "validate", "-c", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    ignored = [line for line in out.stderr.splitlines() if "run.concurrency 4 ignored" in line]
    if says is None:
        assert ignored == [], out.stderr
    else:
        assert len(ignored) == 1 and says in ignored[0], out.stderr


def test_invariants_may_name_a_python_agents_tools() -> None:
    """Faults already aim at a python agent's wrapped tools by name; traffic checks may name them too."""
    base = (
        'version: "2.0"\nagent: {type: python, callable: "m:run", TOOLS}\ngolden_prompts: [hi]\n'
        "contract:\n  name: c\n  invariants:\n    - {id: r, type: retries_after_fault, target: get_quote, max: 1}\n"
        "chaos_matrix: [{name: calm}]\n"
    )
    for tools in ('tools: ["m:get_quote"]', 'tool_registry: "m:REGISTRY"'):
        config = parse_config(base.replace("TOOLS", tools), "f.yaml")
        assert config.contract is not None and config.contract.invariants[0].target == "get_quote"
    with pytest.raises(ConfigError, match="target 'nope' is not defined; valid: get_quote"):
        parse_config(base.replace("TOOLS", 'tools: ["m:get_quote"]').replace("target: get_quote", "target: nope"), "f")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("run: {budget: {}}\n", r"run.budget: a budget that limits nothing: give tokens, cost or llm_calls"),
        ("run: {budget: {llm_calls: true}}\n", r"run.budget.llm_calls: must be a number .*not true/false"),
        ("run: {budget: 100}\n", r"run.budget: must be a mapping of tokens, cost, llm_calls, got 100"),
        ("run: {replicas: [2, 12]}\n", r"run.replicas: must be a number \(e.g. 3\) or \{min: 2, max: 30\}"),
        ("run: {replicas: true}\n", r"run.replicas: must be a number"),
        ("pricing: {models: [1, 2]}\n", r"pricing.models: must be a mapping \(key: value\), got \[1, 2\]"),
    ],
)
def test_the_new_keys_say_what_shape_they_take(text: str, message: str) -> None:
    """Found by a new user: values pydantic would coerce (true as 1) or explain in its own terms are refused in ours."""
    with pytest.raises(ConfigError, match=message):
        parse_config(BASE + text, "f.yaml")


def test_a_percentage_where_a_fraction_goes_says_so() -> None:
    with pytest.raises(
        ConfigError, match=r"scoring.min_pass_rate: must be < 1.0, got 80 \(a fraction: 0.8 means 80%\)"
    ):
        parse_config(
            BASE.replace("scoring:\n", "scoring:\n  replica_aggregation: rate\n  min_pass_rate: 80\n"), "f.yaml"
        )


COMMAND_AGENT = """\
version: "2.0"
agent:
  type: command
  command: [python3, agent.py]
  {extra}
targets: {{}}
golden_prompts: [x]
contract: {{name: c, invariants: [{{id: a, type: completes}}]}}
chaos_matrix: [{{name: calm}}]
"""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("conversation: one-process", r"line 5: agent.conversation: must be one of process_per_turn, one_process"),
        ("timeout_ms: soon", r"line 5: agent.timeout_ms: input should be a valid integer"),
        ("cwd: [1]", r"line 5: agent.cwd: "),
    ],
)
def test_a_command_agents_keys_are_named_not_its_command(extra: str, message: str) -> None:
    """`command` is both the union's tag and the agent's own key: an error under the agent names the key that is
    wrong, on its line, not `agent.command` (a new user's finding)."""
    with pytest.raises(ConfigError, match=message):
        parse_config(COMMAND_AGENT.format(extra=extra), "f.yaml")


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        ("{id: a, turns: []}", r"golden_prompts\[0\].turns: must have at least 1 item, got \[\]$"),
        ("{id: a, turns: [x, '']}", r"golden_prompts\[0\].turns\[1\]: string should have at least 1 character"),
        ("{id: a, turns: text}", r"golden_prompts\[0\].turns: input should be a valid list, got 'text'$"),
        (
            "{id: a, turn: [x, y]}",
            r"golden_prompts\[0\].turn: unknown key 'turn' \(did you mean 'turns'\?\); "
            r"valid keys: id, turns",
        ),
    ],
)
def test_a_conversations_mistake_is_named_not_the_string_it_is_not(prompt: str, message: str) -> None:
    """A prompt is a string or a conversation: the error is the conversation's, not "a valid string" from the
    branch it never was, and no class name shows in the path (a new user's finding)."""
    text = COMMAND_AGENT.format(extra="").replace("golden_prompts: [x]", f"golden_prompts: [{prompt}]")
    with pytest.raises(ConfigError, match=message) as e:
        parse_config(text, "f.yaml")
    assert "Conversation" not in str(e.value) and ".str" not in str(e.value)


@pytest.mark.parametrize("turn", ["0", "first", "-1", "true"])
def test_a_wrong_turn_names_both_forms(turn: str) -> None:
    text = COMMAND_AGENT.format(extra="").replace("type: completes}", f"type: completes, turn: {turn}}}")
    with pytest.raises(
        ConfigError, match=r"turn: must be one of last, all, any, conversation, or a turn number from 1"
    ):
        parse_config(text, "f.yaml")


@pytest.mark.parametrize(
    ("section", "target", "says"),
    [
        ("llm_faults", "quotes", r"target 'quotes' has no api:, so its faults go under tool_faults; move this fault"),
        ("tool_faults", "llm", r"target 'llm' has api:, so its faults go under llm_faults; move this fault"),
    ],
)
def test_a_fault_in_the_other_section_says_so(section: str, target: str, says: str) -> None:
    """Not 'is not one of the targets; valid: (none defined)' for a target that exists (a new user's finding)."""
    text = (
        'version: "2.0"\nproxy: {listeners: [{name: l, listen: "127.0.0.1:1", upstream: "http://127.0.0.1:2"}]}\n'
        "targets: {llm: {listener: l, api: openai, path: /v1/chat*}, quotes: {listener: l, path: /q*}}\n"
        f"chaos_matrix: [{{name: s, {section}: [{{tool: {target}, mode: error}}]}}]\n"
    )
    with pytest.raises(ConfigError, match=says):
        parse_config(text, "f.yaml")
