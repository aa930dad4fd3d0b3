"""A signal while a finished run's reports are written (a trial's Ctrl-C, 4 times in 4: `error: interrupted`, no
report.html or summary.md, and the previous run's beside this run's results.json; SIGTERM killed it silently): the
reports are written all the same, named, and the command exits 130 or 143 saying they are complete.

The command's own run_and_report in a process of its own, its run a finished result; the signal is sent by the
process to itself as its reports begin to be written, so it lands in that window every time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flakeproxy.results import RunResult
from tests.conftest import REPO

PROGRAM = """\
import os, signal, sys
from pathlib import Path
from flakeproxy.cli import running
from flakeproxy.cli.held import hold
from flakeproxy.cli.report import load_result
from flakeproxy.runner.results_file import write

source, out, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
result = load_result(source)
real = running.write_reports

def writing(folder, formats, finished):
    os.kill(os.getpid(), getattr(signal, name))  # as the reports begin to be written
    real(folder, formats, finished)

running.write_reports = writing

async def run(progress):
    write(result, out)
    return result

held = hold()
try:
    running.run_and_report(run, out, ["junit", "html", "md"], True, None, None, held)
finally:
    held.release()
print("returned as if nothing came")
"""


@pytest.mark.parametrize(("name", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_while_the_reports_are_written_waits_for_them(
    demo: dict[str, RunResult], tmp_path: Path, name: str, code: int
) -> None:
    source = tmp_path / "finished.json"
    source.write_text(demo["careful"].model_dump_json())
    out = tmp_path / "out"
    out.mkdir()
    for stale in ("report.html", "summary.md", "junit.xml"):  # an earlier run's, which must not survive
        (out / stale).write_text("an earlier run's")
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(source), str(out), name],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == code, done.stderr
    files = ", ".join(str(out / n) for n in ("results.json", "junit.xml", "report.html", "summary.md"))
    assert done.stderr.strip().splitlines()[-2:] == [
        f"wrote {files}",
        f"error: interrupted by {name} as the run ended; its results and reports in {out} are complete",
    ]
    assert "returned" not in done.stdout and "Traceback" not in done.stderr
    for report in ("report.html", "summary.md", "junit.xml"):
        assert "an earlier run's" not in (out / report).read_text(), report
