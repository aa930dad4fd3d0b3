"""Two runs into one output folder: the second is refused before it writes anything (a trial's second run wrote
its "nothing ran" record over the results of the first, still running), and a run that ended holds nothing."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.support.loops import free_port


def _config(tmp_path: Path) -> Path:
    data = {
        "version": "2.0",
        "agent": {"type": "http", "endpoint": f"http://127.0.0.1:{free_port()}/chat"},  # nothing listens
        "golden_prompts": ["What is AAPL trading at?"],
        "contract": {"name": "lock", "invariants": [{"id": "answers", "type": "completes"}]},
        "chaos_matrix": [{"name": "calm"}],
    }
    (path := tmp_path / "flakeproxy.yaml").write_text(yaml.safe_dump(data))
    return path


def _run(config: Path, out: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(config), "-o", str(out), "-q"]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_a_second_run_into_a_folder_in_use_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text("the running run's")
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as the run in progress holds it
        done = _run(_config(tmp_path), out)
    finally:
        os.close(fd)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: another flakeproxy run is writing its results into {out}; wait for it to end, or give this one a "
        "folder of its own with -o"
    ]
    assert (out / "results.json").read_text() == "the running run's"
    assert sorted(p.name for p in out.iterdir()) == ["results.json"]


def test_a_run_that_ended_holds_nothing(tmp_path: Path) -> None:
    out, config = tmp_path / "out", _config(tmp_path)
    first = _run(config, out)
    second = _run(config, out)
    assert first.returncode == second.returncode == 3, first.stderr + second.stderr  # the agent is not there
    assert "unreachable" in second.stderr and "another flakeproxy run" not in second.stderr
    assert sorted(p.name for p in out.iterdir()) == ["junit.xml", "report.html", "results.json", "summary.md"]
