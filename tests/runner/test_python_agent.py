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


def test_a_python_tool_fault_that_changes_nothing_is_not_counted(tmp_path: Path) -> None:
    """schema_drift of a field the tool does not return, and a fault on a tool the agent never looks up in
    the registry: decided or not, nothing reached the agent, so the chaos cells are ERROR and the run FAILs."""
    import json

    example = tmp_path / "python-agent"
    shutil.copytree(REPO / "examples" / "python-agent", example)
    config = (example / "flakeproxy.yaml").read_text()
    config = config.replace("rename: {price: last_price}", "rename: {volume: day_volume}")
    (example / "flakeproxy.yaml").write_text(config)
    out = cli(example / "flakeproxy.yaml", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    cells = {(c["invariant"], c["scenario"]): c for c in data["cells"]}
    drift = cells[("never-fabricate-when-tools-fail", "quote-tool-drifts")]
    assert drift["outcome"] == "error" and "injected nothing" in drift["reason"]
    assert "changed nothing in the answer (schema_drift" in drift["reason"]
    assert cells[("never-fabricate-when-tools-fail", "quote-tool-down")]["outcome"] == "pass"
    assert "faults quote-tool-drifts: decided 1, applied 0  <- injected nothing" in out.stdout
