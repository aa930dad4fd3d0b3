"""Every example runs as shipped. Each folder in examples/ has a flakeproxy.yaml whose header says how to run it
end to end, in one line (`# Run: COMMAND`; `# Expect: exit N` when it fails on purpose); this runs exactly that
command from the repository's root, with `-o` into a temporary folder, and checks its exit code and the
results.json it wrote."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

FOLDERS = sorted(p for p in (REPO / "examples").iterdir() if p.is_dir())
#: What an example needs beyond flakeproxy itself: a program on PATH, or Python modules.
NEEDS = {"node-agent": ["node"], "conversations": ["node"], "frameworks": ["langgraph", "langchain_openai"]}


def how_to_run(folder: Path) -> tuple[list[str], int]:
    """The command in the config's `# Run:` line, as argv for this Python; the exit code it should end with."""
    text = (folder / "flakeproxy.yaml").read_text(encoding="utf-8")
    run = re.search(r"^# Run: (.+)$", text, re.M)
    assert run, f"{folder.name}/flakeproxy.yaml says nowhere how to run it (a '# Run: COMMAND' line)"
    expect = re.search(r"^# Expect: exit (\d+)", text, re.M)
    args = shlex.split(run[1])
    prefix = {"python": [sys.executable], "flakeproxy": [sys.executable, "-m", "flakeproxy"]}
    assert args[0] in prefix, f"{run[1]!r}: start it with python or flakeproxy"
    return [*prefix[args[0]], *args[1:]], int(expect[1]) if expect else 0


def missing(folder: Path) -> list[str]:
    needs = NEEDS.get(folder.name, [])
    return [n for n in needs if shutil.which(n) is None and importlib.util.find_spec(n) is None]


def test_every_example_folder_has_a_config_and_a_way_to_run_it() -> None:
    assert {f.name for f in FOLDERS} >= {"quickstart", "python-agent", "node-agent", "frameworks", "github-actions"}
    for folder in FOLDERS:
        assert (folder / "flakeproxy.yaml").exists(), f"examples/{folder.name} has no flakeproxy.yaml"
        how_to_run(folder)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_example_runs_end_to_end(folder: Path, tmp_path: Path) -> None:
    if missing(folder):
        pytest.skip(f"needs {', '.join(missing(folder))}")
    args, expected = how_to_run(folder)
    started = time.monotonic()
    out = subprocess.run(
        [*args, "-o", str(tmp_path)],
        cwd=REPO,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},  # nothing written into the examples
        capture_output=True,
        text=True,
        timeout=80,
    )
    took = time.monotonic() - started
    assert out.returncode == expected, f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    # a shard run's results are the merge's (github-actions); any other example writes into -o itself
    results = next(
        p for p in (tmp_path / "results.json", tmp_path / "flakeproxy-results" / "results.json") if p.exists()
    )
    data = json.loads(results.read_text())
    assert data["complete"] is True and data["score"]["passed"] is (expected == 0)
    said = out.stdout + out.stderr  # and it said where (the workflow's merge, run in the folder: relative)
    assert f"wrote {results}" in said or f"wrote {results.relative_to(tmp_path)}" in said
    print(f"examples/{folder.name}: {took:.1f} s")
