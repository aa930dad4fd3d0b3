"""action.yml's composite steps, run as a script the way a GitHub runner runs them: `run:` steps in bash
(`bash --noprofile --norc -eo pipefail`) with their rendered `env:`, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and
GITHUB_ACTION_PATH; a step without `if:` only while every earlier step succeeded, an `if: always()` one in
any case; the `${{ }}` expressions the action uses (inputs, step outputs) and no others. The `uses:` steps
are the runner's own: the test stands in for them (`Stand-in`), and says what they were given."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
#: A `uses:` step's stand-in: given the step's rendered `with:`, it returns whether it succeeded.
StandIn = Callable[[dict[str, str]], bool]


@dataclass
class ActionRun:
    action: dict[str, Any]
    inputs: dict[str, str]
    stand_ins: dict[str, StandIn]  # `uses:` without its @version -> stand-in
    env: dict[str, str]
    workspace: Path
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)  # step id -> its outputs
    ran: list[str] = field(default_factory=list)  # the names of the steps that ran
    failed: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)  # each bash step's output, for failure messages

    def render(self, text: str) -> str:
        def one(match: re.Match[str]) -> str:
            expression = match[1]
            if expression.startswith("inputs."):
                return self.inputs[expression.removeprefix("inputs.")]
            step = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
            assert step, f"action.yml uses an expression this test does not evaluate: {expression}"
            return self.outputs.get(step[1], {}).get(step[2], "")

        return EXPRESSION.sub(one, text)

    def run(self) -> dict[str, str]:
        """Every step in order; the action's outputs."""
        for step in self.action["runs"]["steps"]:
            condition = step.get("if")
            assert condition in (None, "always()"), f"an `if:` this test does not evaluate: {condition}"
            if self.failed and condition != "always()":
                continue
            self.ran.append(step["name"])
            ok = self._uses(step) if "uses" in step else self._bash(step)
            if not ok:
                self.failed.append(step["name"])
        return {name: self.render(out["value"]) for name, out in self.action["outputs"].items()}

    def _uses(self, step: dict[str, Any]) -> bool:
        action = step["uses"].split("@")[0]
        assert action in self.stand_ins, f"no stand-in for {step['uses']}"
        return self.stand_ins[action]({k: self.render(str(v)) for k, v in step.get("with", {}).items()})

    def _bash(self, step: dict[str, Any]) -> bool:
        assert step["shell"] == "bash", step
        script = self.workspace / ".step.sh"
        script.write_text(self.render(step["run"]))
        output = self.workspace / ".github_output"
        output.write_text("")
        env = {**self.env, **{k: self.render(str(v)) for k, v in step.get("env", {}).items()}}
        env["GITHUB_OUTPUT"] = str(output)
        command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
        done = subprocess.run(command, env=env, cwd=self.workspace, capture_output=True, text=True, timeout=600)
        self.logs.append(f"## {step['name']} (exit {done.returncode})\n{done.stdout}{done.stderr}")
        if "id" in step:
            self.outputs[step["id"]] = _outputs(output.read_text())
        return done.returncode == 0


def _outputs(text: str) -> dict[str, str]:
    assert "<<" not in text, "multi-line outputs are not read by this test"
    return dict(line.split("=", 1) for line in text.splitlines() if line)


def base_env(path: list[Path], **extra: str) -> dict[str, str]:
    """A runner's environment: no Python variables of the test's own venv, these folders first on PATH."""
    keep = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    parts = [p for p in os.environ["PATH"].split(os.pathsep) if ".venv" not in p]
    return {**keep, "PATH": os.pathsep.join([*map(str, path), *parts]), **extra}
