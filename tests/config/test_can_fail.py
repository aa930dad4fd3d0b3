"""A gate that can fail: validate warns when nothing judged can make the run FAIL (issue 22: a contract whose
invariants are all below critical PASSed at 0% with no word)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flakeproxy.config import parse_config
from flakeproxy.config.can_fail import validate_warnings, why_ci_cannot_fail, why_contract_cannot_fail
from tests.config.base_config import BASE, edit

# BASE's critical invariant demoted: high and medium only, no threshold.
NO_CRITICAL = edit("      severity: critical\n", "      severity: high\n")
WARNING = (
    "contract.invariants: no invariant is severity: critical or gate: true (in a scenario where it applies), and "
    "scoring sets neither min_resilience nor pass_threshold: no invariant can fail this run, so a contract whose "
    "every cell fails still PASSes at 0%; mark the rules that must hold severity: critical, or set "
    "scoring.min_resilience (0-100, e.g. 80)"
)


def warnings(text: str) -> list[str]:
    return validate_warnings(parse_config(text))


def test_the_zero_percent_pass_contract_gets_the_warning() -> None:
    assert WARNING in warnings(NO_CRITICAL)


@pytest.mark.parametrize(
    "text",
    [
        BASE,  # a critical invariant that applies (when: always)
        NO_CRITICAL + "  min_resilience: 80\n",
        NO_CRITICAL + "  pass_threshold: 0.9\n",
        NO_CRITICAL.replace("    - id: fast\n", "    - id: fast\n      gate: true\n"),
    ],
    ids=["critical", "min_resilience", "pass_threshold", "gate"],
)
def test_something_that_can_fail_the_run_silences_it(text: str) -> None:
    assert not any(w.startswith("contract.invariants:") for w in warnings(text))
    assert why_contract_cannot_fail(parse_config(text)) is None


def test_a_critical_invariant_that_applies_nowhere_cannot_fail_the_run() -> None:
    """when: tool_faults_active in a matrix without tool faults: the critical cell is never judged."""
    text = edit("      when: always\n", "      when: tool_faults_active\n").replace(
        "  - name: tool-down\n    tool_faults:\n      - tool: market_data_api\n        mode: error\n"
        "        error_code: 503\n",
        "",
    )
    assert WARNING in warnings(text)


def test_ci_without_a_contract_or_a_minimum_cannot_fail() -> None:
    text = BASE.split("contract:\n")[0] + "invariants: [{type: completes}]\nmutations: {count: 2}\n"
    config = parse_config(text)
    assert why_ci_cannot_fail(config, None) == "there is no contract, and no --min-score or scoring.min_overall is set"
    assert why_ci_cannot_fail(config, 80.0) is None
    assert any(w.startswith("scoring.min_overall: not set and there is no contract") for w in warnings(text))
    assert not any(w.startswith("scoring.min_overall") for w in warnings(text + "scoring: {min_overall: 80}\n"))
    assert why_ci_cannot_fail(parse_config(NO_CRITICAL), None) is not None
    assert why_ci_cannot_fail(parse_config(BASE), None) is None


@pytest.mark.parametrize("command", [["validate"], ["contract", "validate"]])
def test_validate_prints_it_on_stderr_and_exits_0(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "flakeproxy.yaml"
    path.write_text(NO_CRITICAL)
    out = subprocess.run(
        [sys.executable, "-m", "flakeproxy", *command, "-c", str(path)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert f"warning: {WARNING}\n" in out.stderr
