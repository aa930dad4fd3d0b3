"""action.yml's gate in compare mode: its exit code is the worse of the run's verdict and the comparison's, for
every pair of codes. A trial's baseline and candidate both leaked (each run exit 1) and compare PASSed (exit 0):
the action used to replace the run's 1 with compare's 0, so a leaking baseline let every leaking pull request
through. The action's own run step runs here as a runner runs it (tests/containers/actions.py), with a stand-in
`flakeproxy` on PATH that exits as told (the whole action with the real flakeproxy and a real agent is in
test_github_actions.py). No container engine needed: it runs with the rest of the suite."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.containers.actions import ActionRun, base_env

ACTION = REPO / "action.yml"
STAND_IN = """#!/usr/bin/env bash
echo "$*" >> "$CALLS"
if [ "$1" = compare ]; then exit "$COMPARE_EXIT"; fi
exit "$RUN_EXIT"
"""


def run_step(tmp: Path, run_exit: int, compare_exit: int, baseline: str) -> tuple[str, list[str], str]:
    """action.yml's run step with these inputs: (its exit-code output, the flakeproxy commands it ran, its log)."""
    action = yaml.safe_load(ACTION.read_text())
    [step] = [s for s in action["runs"]["steps"] if s.get("id") == "run"]
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()} | {"baseline": baseline}
    folder = tmp / "bin"
    folder.mkdir()
    (folder / "flakeproxy").write_text(STAND_IN)
    (folder / "flakeproxy").chmod(0o755)
    calls = tmp / "calls"
    env = base_env([folder], RUN_EXIT=str(run_exit), COMPARE_EXIT=str(compare_exit), CALLS=str(calls))
    run = ActionRun(action, inputs, {}, env, tmp)
    run._bash(step)
    commands = [line.split()[0] for line in calls.read_text().splitlines()]
    return run.outputs["run"]["exit-code"], commands, "\n".join(run.logs)


@pytest.mark.parametrize(
    ("run_exit", "compare_exit", "action_exit"),
    [
        (0, 0, 0),
        (1, 0, 1),  # the gate hole: the run FAILs, nothing regressed against a baseline that fails the same way
        (1, 4, 1),
        (1, 1, 1),
        (0, 1, 1),  # a regression
        (0, 4, 4),
        (4, 0, 4),  # the run INCONCLUSIVE, nothing regressed
        (4, 4, 4),
        (4, 1, 1),
        (0, 2, 2),  # the comparison could not run (a bad baseline): its own code
        (1, 2, 2),
    ],
)
def test_the_action_exits_with_the_worse_of_the_run_and_the_comparison(
    tmp_path: Path, run_exit: int, compare_exit: int, action_exit: int
) -> None:
    code, commands, log = run_step(tmp_path, run_exit, compare_exit, "baseline/results.json")
    assert code == str(action_exit), log
    assert commands == ["contract", "compare"]
    assert f"the run exited {run_exit}, the comparison {compare_exit}: the action exits {action_exit}" in log


@pytest.mark.parametrize("run_exit", [2, 3, 5])
def test_a_run_that_could_not_finish_is_not_compared_and_keeps_its_code(tmp_path: Path, run_exit: int) -> None:
    code, commands, log = run_step(tmp_path, run_exit, 0, "baseline/results.json")
    assert (code, commands) == (str(run_exit), ["contract"]), log


@pytest.mark.parametrize("run_exit", [0, 1, 4])
def test_without_a_baseline_the_action_exits_with_the_runs_code(tmp_path: Path, run_exit: int) -> None:
    code, commands, log = run_step(tmp_path, run_exit, 0, "")
    assert (code, commands) == (str(run_exit), ["contract"]), log
