"""action.yml: a composite action whose steps set up Python, install flakeproxy, run the documented command
with the inputs, write summary.md to the job summary and upload the reports. Its bash steps are run here
as GitHub would run them (env from the inputs), against a real contract run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO
from tests.runner.world import world

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
STEPS = {step["name"]: step for step in ACTION["runs"]["steps"]}


def _bash(step: dict[str, Any], inputs: dict[str, str], tmp: Path, cwd: Path) -> tuple[int, dict[str, str], str]:
    """Run a step's script with its env resolved from the inputs; return its exit code, outputs, stdout+stderr."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for name, value in step.get("env", {}).items():
        key = value.removeprefix("${{ inputs.").removesuffix(" }}")
        env[name] = inputs.get(key, ACTION["inputs"][key]["default"])
    env["GITHUB_OUTPUT"], env["GITHUB_STEP_SUMMARY"] = str(tmp / "output"), str(tmp / "summary")
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )
    outputs = dict(
        line.split("=", 1) for line in (tmp / "output").read_text().splitlines() if (tmp / "output").exists()
    )
    return done.returncode, outputs, done.stdout + done.stderr


def test_action_shape() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert ACTION["inputs"]["command"]["default"] == "contract run"
    assert {"config", "command", "min-score", "shard"} <= set(ACTION["inputs"])
    uses = [s.get("uses", "") for s in ACTION["runs"]["steps"]]
    assert uses[0] == "actions/setup-python@v5" and "actions/upload-artifact@v4" in uses
    install = STEPS["Install flakeproxy"]["run"]
    assert "pip install" in install and "$GITHUB_ACTION_PATH" in install
    assert STEPS["Upload the reports"]["if"] == "always()" and STEPS["Write the job summary"]["if"] == "always()"
    assert STEPS["Upload the reports"]["with"]["path"] == "${{ inputs.output }}"
    scripts = "".join(s.get("run", "") for s in ACTION["runs"]["steps"])
    assert "${{" not in scripts  # inputs reach scripts through env only: no script injection


def test_action_runs_the_contract_and_writes_the_summary(tmp_path: Path) -> None:
    with world(tmp_path / "w", "naive") as w:
        code, outputs, err = _bash(STEPS["Run flakeproxy"], {"config": str(w.config)}, tmp_path, tmp_path)
    assert code == 0, err
    assert outputs == {"exit-code": "1", "results": "flakeproxy-results/results.json"}
    assert (tmp_path / "flakeproxy-results" / "junit.xml").exists()
    code, _, err = _bash(STEPS["Write the job summary"], {}, tmp_path, tmp_path)
    assert code == 0, err
    assert (tmp_path / "summary").read_text().startswith("## ❌ flakeproxy: Finance Agent Contract: **FAIL**")
    code, _, _ = _bash(STEPS["Fail when flakeproxy failed"] | {"env": {}}, {}, tmp_path, tmp_path)
    assert code == 3  # no exit code recorded: infrastructure


def test_action_passes_min_score_and_shard_only_when_set(tmp_path: Path) -> None:
    inputs = {"config": "missing.yaml", "command": "report", "min-score": "90", "shard": "1/2"}
    code, outputs, err = _bash(STEPS["Run flakeproxy"], inputs, tmp_path, tmp_path)
    assert code == 0 and outputs["exit-code"] == "2"
    assert "flakeproxy report -c missing.yaml -o flakeproxy-results --min-score 90 --shard 1/2\n" in err
    code, outputs, err = _bash(STEPS["Run flakeproxy"], {"command": "report"}, tmp_path, tmp_path)
    assert "flakeproxy report -c flakeproxy.yaml -o flakeproxy-results\n" in err
