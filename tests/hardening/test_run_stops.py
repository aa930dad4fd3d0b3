"""A run that stops, however it stops, keeps what it did and leaves no proxy behind (issue 21 items 4 and 5).

- An exception no one foresaw (here a reset_function that raises on its second call) writes the partial
  results, stops the proxy child, and exits 3 with one line naming the error and where the traceback went.
- A runner killed by SIGKILL, 3 times of 3, takes its proxy child with it: the child ends within a bounded wait
  (a parent-death signal, and a watchdog on its parent), where before it stayed on its ports.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hardening.runs import contract_run, listening, run_world, wait_closed
from tests.support.children import proxy_children

pytestmark = pytest.mark.proxy_child  # what happens to the runner's proxy child

CRASHY = """
calls = 0


def reset():
    global calls
    calls += 1
    if calls == 2:
        raise RuntimeError("boom in reset")
"""


@pytest.mark.timeout(120)
def test_an_unexpected_exception_writes_partial_results_stops_the_proxy_and_exits_3(tmp_path: Path) -> None:
    (tmp_path / "crashy.py").write_text(CRASHY)
    answer = json.dumps({"reply": "AAPL, according to the source."}).encode()
    with run_world(tmp_path, answer, reset_function="crashy:reset", reset_endpoint=None) as world:
        out = contract_run(world)
        assert not listening(world.admin), "the proxy child stopped"
    assert out.returncode == 3, out.stderr[-2000:]
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: the run stopped on an unexpected error (RuntimeError: boom in reset); the results so far are in "
        f"{world.out / 'results.json'}, the traceback in {world.out / 'crash.txt'}"
    ]
    assert "Traceback" not in out.stderr and "Traceback" in (world.out / "crash.txt").read_text()
    results = json.loads((world.out / "results.json").read_text())
    assert results["complete"] is False and results["interrupted_by"] == "RuntimeError: boom in reset"
    assert len(results["episodes"]) == 1, "the episode done before the crash is kept"
    assert (world.out / "report.html").exists(), "the reports of what was done"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("attempt", [1, 2, 3])
def test_a_killed_runner_takes_its_proxy_child_with_it(tmp_path: Path, attempt: int) -> None:
    answer = json.dumps({"reply": "slow"}).encode()
    with run_world(tmp_path, answer, delay_s=30) as world:
        command = [sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(world.config)]
        runner = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not listening(world.admin):  # the proxy child is up: the runner waits on the slow agent next
                assert runner.poll() is None and time.monotonic() < deadline, "the proxy child never came up"
                time.sleep(0.05)
            children = proxy_children(world.config)
            assert len(children) == 1, children
        finally:
            os.kill(runner.pid, signal.SIGKILL)
            runner.wait(10)
        assert wait_closed(world.admin, 15), "the proxy child still listens after its runner was killed"
        deadline = time.monotonic() + 15
        while proxy_children(world.config) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proxy_children(world.config) == [], "the proxy child outlived its runner"
