"""The demo, run once per test run as users run it (`flakeproxy demo -q -o DIR`, the proxy as a real child
process) and shared: the demo tests assert its matrices and its output, the report tests render its results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.shared import locked, run_folder

IN_PROCESS = "FLAKEPROXY_IN_PROCESS_PROXY"


@dataclass(frozen=True)
class DemoRun:
    folder: Path  # careful/ and naive/, each with results.json and the reports
    returncode: int
    stdout: str
    stderr: str


def demo_run(factory: pytest.TempPathFactory) -> DemoRun:
    """The run's one demo (made now, under a lock, if no worker of this run made it yet)."""
    root = run_folder(factory)
    folder, said = root / "demo", root / "demo-command.json"
    with locked(root / "demo.lock"):
        if not said.exists():
            env = {k: v for k, v in os.environ.items() if k != IN_PROCESS}  # the proxy as the child users get
            out = subprocess.run(
                [sys.executable, "-m", "flakeproxy", "demo", "-q", "-o", str(folder)],
                capture_output=True,
                text=True,
                timeout=240,
                env=env,
            )
            said.write_text(json.dumps({"returncode": out.returncode, "stdout": out.stdout, "stderr": out.stderr}))
    told = json.loads(said.read_text())
    return DemoRun(folder, told["returncode"], told["stdout"], told["stderr"])
