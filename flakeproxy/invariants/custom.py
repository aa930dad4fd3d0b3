from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge


class Custom(Invariant):
    """A script reads the episode's context JSON on stdin and prints {passed, score, reason, details}."""

    type: Literal["custom"]
    calls_out: ClassVar[bool] = True
    reads_whole: ClassVar[bool] = True
    needs_answer: ClassVar[bool] = False
    reads_state: ClassVar[bool] = True
    reads_journal: ClassVar[bool] = True
    script: str = Field(min_length=1)
    runs_in: Literal["host", "sandbox"] = "host"
    timeout_ms: int = Field(60000, gt=0)

    def _context(self, obs: Observation, journal_path: str) -> dict[str, object]:
        services = {name: s.model_dump(mode="json") for name, s in obs.services.items()}
        return {
            "workspace_path": obs.workspace,
            "services": services,
            "audit_log_path": journal_path,
            "trace_path": journal_path,
            "task": {"prompt": obs.prompt},
            "scenario": obs.scenario,
            "scenario_params": {},
            "agent_output": obs.text,
            "latency_ms": obs.latency_ms,
        }

    def evaluate(self, obs: Observation) -> Verdict:
        """A .py script runs with this Python; anything else is executed as it is. Exit != 0 or bad JSON: error."""
        if self.runs_in == "sandbox":
            return cannot_judge("runs_in: sandbox is not supported; flakeproxy runs custom checks on the host")
        script = Path(self.script) if Path(self.script).is_absolute() else Path(obs.workspace or ".") / self.script
        if not script.exists():
            return cannot_judge(f"custom script {script} does not exist")
        command = [sys.executable, str(script)] if script.suffix == ".py" else [str(script)]
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as journal:
            journal.writelines(json.dumps(e) + "\n" for e in obs.journal)
        try:
            done = subprocess.run(
                command,
                input=json.dumps(self._context(obs, journal.name)),
                capture_output=True,
                text=True,
                timeout=self.timeout_ms / 1000,
                cwd=obs.workspace,
            )
        except subprocess.TimeoutExpired:
            return cannot_judge(f"custom script {script} did not finish in {self.timeout_ms} ms")
        finally:
            Path(journal.name).unlink(missing_ok=True)
        if done.returncode != 0:
            return cannot_judge(f"custom script exited {done.returncode}: {done.stderr.strip()[-300:]}")
        try:
            result = json.loads(done.stdout)
            passed, reason = bool(result["passed"]), str(result.get("reason", ""))
            score = float(result.get("score", 1.0 if passed else 0.0))
        except (ValueError, KeyError, TypeError) as e:
            return cannot_judge(f"custom script printed no {{passed, score, reason}} JSON ({e}): {done.stdout[:200]!r}")
        details = result.get("details") or {}
        return Verdict(
            "pass" if passed else "fail",
            reason or ("passed" if passed else "failed"),
            {"details": details},
            max(0.0, min(1.0, score)),
        )
