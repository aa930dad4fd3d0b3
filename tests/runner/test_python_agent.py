"""A python-callable agent: tool faults wrap its ToolRegistry with the proxy's own decisions."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.runner.world import cli


def test_python_agent_example_runs_its_matrix(tmp_path: Path) -> None:
    example = tmp_path / "python-agent"
    shutil.copytree(REPO / "examples" / "python-agent", example)
    out = cli(example / "flakeproxy.yaml", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "resilience score 100.0%  PASS" in out.stdout
    import json

    data = json.loads((tmp_path / "out" / "results.json").read_text())
    cells, episodes = data["cells"], {e["id"]: e for e in data["episodes"]}
    down = [c for c in cells if c["scenario"] == "quote-tool-down" and c["outcome"] != "not_applicable"]
    assert all(c["faults_injected"] and c["faults_injected"][0]["kind"] == "error" for c in down)
    assert "market data source is unavailable" in episodes[down[0]["episodes"][0]]["answer"]
    drift = [c for c in cells if c["scenario"] == "quote-tool-drifts" and c["invariant"] == "always-cite-source"]
    assert "unavailable" in episodes[drift[0]["episodes"][0]]["answer"]  # price renamed: the agent noticed


def test_tool_faults_without_tools_is_the_spec_error(tmp_path: Path) -> None:
    config = (REPO / "examples" / "python-agent" / "flakeproxy.yaml").read_text()
    path = tmp_path / "c.yaml"
    path.write_text(
        config.replace("  tool_registry: finance_agent:REGISTRY  # tool faults wrap every entry of this mapping\n", "")
    )
    out = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "validate", "-c", str(path)], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 2
    assert "tool faults on a python agent need agent.tools" in out.stderr
