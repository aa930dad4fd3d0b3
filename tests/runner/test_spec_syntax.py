"""The invariants-weights-gates syntax runs as a contract: command and file checks, weights, a gate."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO
from tests.runner.world import cli


def test_spec_syntax_example_runs_from_anywhere(tmp_path: Path) -> None:
    out = cli(REPO / "examples" / "spec-syntax.yaml", "-o", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "composite score by scenario: no-chaos 1.00" in out.stdout
