"""The README's one-command example: `bash examples/quickstart/run.sh` serves a fake LLM, a market-data
API and a careful agent on loopback, runs the quickstart contract through the real proxy and prints the
matrix."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.mark.timeout(120)
def test_quickstart_runs_end_to_end(tmp_path: Path) -> None:
    out = subprocess.run(
        ["bash", "examples/quickstart/run.sh", "-o", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
    header = next(line for line in out.stdout.splitlines() if line.startswith("invariant"))
    scenarios = ["no-chaos", "quote-tool-down", "quote-tool-reset", "llm-rate-limited", "llm-truncated"]
    assert header.split()[1:] == scenarios
    assert "resilience score 100.0%  PASS" in out.stdout
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["score"]["passed"] is True
    # every fault really happened on the wire, seen by the proxy
    injected = {c["scenario"] for c in results["cells"] if c["faults_injected"]}
    assert injected == {"quote-tool-down", "quote-tool-reset", "llm-rate-limited", "llm-truncated"}
