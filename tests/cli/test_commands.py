"""The CLI commands, run as a user runs them: a real process, its output and exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.config.base_config import BASE, edit
from tests.conftest import REPO

FINANCE = str(REPO / "examples" / "finance-contract.yaml")


def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flakeproxy", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def test_validate_ok() -> None:
    out = run("validate", "-c", FINANCE)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (f"{FINANCE}: valid (agent http, 3 listeners, 3 targets, 3 scenarios, 3 invariants)\n")


def test_config_from_environment_variable() -> None:
    out = run("validate", env={"FLAKEPROXY_CONFIG": FINANCE})
    assert out.returncode == 0, out.stderr
    assert FINANCE in out.stdout


def test_default_config_name_is_flakeproxy_yaml(tmp_path: Path) -> None:
    out = run("validate", cwd=tmp_path, env={"PYTHONPATH": str(REPO)})
    assert out.returncode == 2
    assert out.stderr == "error: no flakeproxy.yaml here: create one with `flakeproxy init`, or pass -c FILE\n"


def test_contract_validate_counts_cells() -> None:
    out = run("contract", "validate", "-c", FINANCE)
    assert out.returncode == 0, out.stderr
    assert "contract 'Finance Agent Contract' is valid: 3 invariants x 3 scenarios = 9 cells" in out.stdout
    assert "(2 not applicable by `when` or `scenarios`)" in out.stdout


def test_contract_validate_needs_a_contract(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(BASE[: BASE.index("contract:")] + BASE[BASE.index("chaos_matrix:") :])
    assert run("validate", "-c", str(path)).returncode == 0
    out = run("contract", "validate", "-c", str(path))
    assert out.returncode == 2
    assert out.stderr == f"error: {path}: contract: missing; add a contract: section with name and invariants\n"


def test_contract_validate_needs_a_matrix(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(BASE[: BASE.index("chaos_matrix:")])
    out = run("contract", "validate", "-c", str(path))
    assert out.returncode == 2
    assert "chaos_matrix: missing; add at least one scenario" in out.stderr
    assert len(out.stderr.splitlines()) == 1


def test_broken_config_has_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(edit("mode: error", "mode: explode"))
    out = run("contract", "validate", "-c", str(path))
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith(f"error: {path} line 33: chaos_matrix[1].tool_faults[0].mode: unknown mode")


def test_unknown_option_exits_2() -> None:
    out = run("validate", "--nope")
    assert out.returncode == 2
    assert out.stderr == "error: No such option '--nope'; see 'flakeproxy validate --help'\n"


def test_schema_is_json() -> None:
    out = run("schema", "--indent", "0")
    assert out.returncode == 0
    assert len(out.stdout.splitlines()) == 1
    schema = json.loads(out.stdout)
    assert schema["title"] == "FlakeproxyConfig"
    assert "chaos_matrix" in schema["properties"]


def test_help_lists_commands_and_exit_codes() -> None:
    out = run("--help")
    assert out.returncode == 0
    for word in ("validate", "schema", "contract", "Exit codes: 0 pass, 1 the contract"):
        assert word in out.stdout


@pytest.mark.parametrize("command", ["run", "score"])
def test_contract_run_and_score_list_every_exit_code_they_can_give(command: str) -> None:
    """0 1 2 3 4 5 130 143, from the one text `flakeproxy --help` shows too (a new user saw 0 to 3 only)."""
    from flakeproxy.cli.exits import EXIT_CODES

    out = run("contract", command, "--help")
    assert out.returncode == 0, out.stderr
    shown = " ".join(out.stdout.split())
    assert " ".join(EXIT_CODES.removeprefix("\b").split()) in shown
    for code in ("0 pass", "1 the contract", "2 the config", "3 the infrastructure", "4 inconclusive", "5 the run",
                 "130 / 143"):  # fmt: skip
        assert code in shown


def test_contract_validate_names_a_command_agent_that_is_not_there(tmp_path: Path) -> None:
    """A trial's `nodex` validated, and the run then stopped with exit 3 on it."""
    import yaml

    from tests.config.base_config import BASE

    data = yaml.safe_load(BASE)
    data["agent"] = {"type": "command", "command": ["nodex-not-installed", "agent.js"]}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    out = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "contract", "validate", "-c", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert out.stderr.strip().endswith(
        "agent.command: 'nodex-not-installed' is not a command on PATH; install it, or give its path"
    ), out.stderr
    data["agent"]["command"] = [sys.executable, "agent.py"]
    path.write_text(yaml.safe_dump(data))
    ok = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "contract", "validate", "-c", str(path)], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
