"""The invariants-weights-gates syntax runs as a contract: command and file checks, weights, a gate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_spec_syntax_example_runs_from_anywhere(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "flakeproxy",
            "contract",
            "run",
            "-c",
            str(REPO / "examples" / "spec-syntax.yaml"),
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "composite score by scenario: no-chaos 1.00" in out.stdout
