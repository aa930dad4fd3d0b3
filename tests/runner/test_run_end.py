"""How a run's process ends (issue 23): once its files are written and its proxy stopped, a run that loaded none of
the user's code exits with its own code after the atexit handlers and a flush, skipping the interpreter's teardown
of its ~1,000 modules; a run that imported the user's code (a python agent) keeps the teardown, whose finalizers
that code may count on."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.hardening.runs import contract_run, run_world
from tests.runner.world import cli

#: A sitecustomize for the run's process: one mark written by an atexit handler, one by a finalizer at teardown.
MARKS = """import atexit, pathlib
class _AtTeardown:
    def __del__(self):
        pathlib.Path({teardown!r}).touch()
_kept = _AtTeardown()
atexit.register(pathlib.Path({atexit!r}).touch)
"""

pytestmark = pytest.mark.proxy_child  # as users run it: a process of its own, its proxy a child


def _marked(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    site, atexit_mark, teardown_mark = tmp / "site", tmp / "atexit-ran", tmp / "teardown-ran"
    site.mkdir()
    (site / "sitecustomize.py").write_text(MARKS.format(atexit=str(atexit_mark), teardown=str(teardown_mark)))
    monkeypatch.setenv("PYTHONPATH", str(site))
    return atexit_mark, teardown_mark


@pytest.mark.parametrize(("answer", "code"), [("AAPL is 189.5, per the source.", 0), ("AAPL is 189.5.", 1)])
def test_a_run_of_an_http_agent_ends_at_once_with_its_code_and_its_atexit_handlers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str, code: int
) -> None:
    atexit_mark, teardown_mark = _marked(tmp_path, monkeypatch)
    with run_world(tmp_path, json.dumps({"reply": answer}).encode()) as world:
        data = yaml.safe_load(world.config.read_text())
        data["contract"]["invariants"][0]["severity"] = "critical"  # its FAIL fails the run
        world.config.write_text(yaml.safe_dump(data))
        out = contract_run(world)
    assert out.returncode == code, out.stderr[-2000:]
    assert ("PASS" if code == 0 else "FAIL") in out.stdout and "wrote " in out.stderr
    assert json.loads((world.out / "results.json").read_text())["complete"] is True
    assert atexit_mark.exists(), "the atexit handlers ran"
    assert not teardown_mark.exists(), "the interpreter's teardown was skipped"


def test_a_run_of_a_python_agent_keeps_the_interpreters_teardown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    atexit_mark, teardown_mark = _marked(tmp_path, monkeypatch)
    example = tmp_path / "python-agent"
    shutil.copytree(REPO / "examples" / "python-agent", example)
    out = cli(example / "flakeproxy.yaml", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert atexit_mark.exists() and teardown_mark.exists(), "the user's code imported here: the usual end"


#: How the run's output leaves it: both streams into a reader that is gone at once, stdout alone into one (stderr
#: kept in a file), stdout closed, stderr closed (`>&-`): bash runs it and says the run's own exit code.
SHELLS = {
    "both-into-a-gone-reader": "{run} 2>&1 | true; echo ${{PIPESTATUS[0]}} > {code}",
    "stdout-into-a-gone-reader": "{run} 2>{err} | true; echo ${{PIPESTATUS[0]}} > {code}",
    "stdout-closed": "{run} >&- 2>{err}; echo $? > {code}",
    "stderr-closed": "{run} 2>&-; echo $? > {code}",
}


@pytest.mark.parametrize("how", sorted(SHELLS))
@pytest.mark.parametrize(("answer", "verdict"), [("AAPL is 189.5, per the source.", 0), ("AAPL is 189.5.", 1)])
def test_a_run_whose_output_has_no_reader_still_runs_writes_its_files_and_exits_with_its_verdict(
    tmp_path: Path, how: str, answer: str, verdict: int
) -> None:
    """A reader gone (`| head -1`, a closed terminal) or a stream closed at launch used to stop the run half-way
    or after the fact with exit 1 ("the contract failed"), or crash it before its proxy started: the stream is
    silenced instead (flakeproxy/console.py, cli.main.standard_streams)."""
    code, err = tmp_path / "code", tmp_path / "err"
    with run_world(tmp_path, json.dumps({"reply": answer}).encode()) as world:
        data = yaml.safe_load(world.config.read_text())
        data["contract"]["invariants"][0]["severity"] = "critical"
        world.config.write_text(yaml.safe_dump(data))
        run = shlex.join([sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(world.config)])
        script = SHELLS[how].format(run=run, code=shlex.quote(str(code)), err=shlex.quote(str(err)))
        subprocess.run(["bash", "-c", script], cwd=world.config.parent, timeout=120, check=True)
    assert code.read_text().strip() == str(verdict), err.read_text() if err.exists() else ""
    results = json.loads((world.out / "results.json").read_text())
    assert results["complete"] is True and results["interrupted_by"] is None
    assert all((world.out / name).stat().st_size > 0 for name in ("junit.xml", "report.html", "summary.md"))
    if err.exists():  # stderr kept: its lines are whole, the last names the files
        assert "Traceback" not in err.read_text() and err.read_text().rstrip().splitlines()[-1].startswith("wrote ")
