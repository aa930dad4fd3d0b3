"""`flakeproxy plan` says how many episodes the run will run at once and why: what the run does, not what
run.concurrency asks for (a new user's trial: `concurrency 3` printed for a run that went one at a time)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.config.base_config import BASE


@pytest.mark.parametrize(
    ("run", "says"),
    [
        (
            "{concurrency: 3}",
            "1 at a time (run.concurrency 3 ignored: run.attribution is none, so the proxy could not tell "
            "overlapping episodes' requests apart; set run.attribution: header, trace or slots)",
        ),
        ("{concurrency: 3, attribution: header}", "3 at a time (run.concurrency 3, run.attribution: header)"),
        ("{concurrency: 1}", "1 at a time (run.concurrency 1)"),
    ],
)
def test_plan_prints_what_the_run_will_do_and_why(tmp_path: Path, run: str, says: str) -> None:
    config = tmp_path / "flakeproxy.yaml"
    config.write_text(BASE + f"run: {run}\n")
    done = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "plan", "-c", str(config)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.endswith(f"4 episodes at 1 replica(s), {says}"), first  # a stateful check too
