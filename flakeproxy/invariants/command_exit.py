from __future__ import annotations

import subprocess
from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge, check


class CommandExit(Invariant):
    """A shell command run in run.workspace returns exit_code."""

    type: Literal["command_exit"]
    calls_out: ClassVar[bool] = True
    needs_answer: ClassVar[bool] = False
    reads_state: ClassVar[bool] = True
    command: str = Field(min_length=1)
    exit_code: int = 0
    timeout_ms: int = Field(60000, gt=0)

    def evaluate(self, obs: Observation) -> Verdict:
        try:
            done = subprocess.run(
                ["sh", "-c", self.command],
                cwd=obs.workspace,
                capture_output=True,
                text=True,
                timeout=self.timeout_ms / 1000,
            )
        except subprocess.TimeoutExpired:
            return cannot_judge(f"command did not finish in {self.timeout_ms} ms: {self.command}")
        except OSError as e:
            return cannot_judge(f"cannot run {self.command!r}: {e}")
        out = (done.stdout + done.stderr)[-2000:]
        return check(
            done.returncode == self.exit_code,
            f"exit {done.returncode}",
            f"exit {done.returncode}, expected {self.exit_code}; output: {out.strip()[-300:]}",
            exit_code=done.returncode,
            output=out,
        )
