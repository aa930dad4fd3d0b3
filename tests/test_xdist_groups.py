"""The suite's scheduling (tests/conftest.py): under `--dist loadgroup` a test file is one group, run by one worker,
so its module fixtures (servers, a proxy, the shared demo) start once, not once per worker."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict

from tests.conftest import REPO

FILES = ("tests/test_stats.py", "tests/test_replicas.py", "tests/test_stats_compare.py")


def test_each_file_runs_on_one_worker() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider", *FILES],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-2000:]
    workers: dict[str, set[str]] = defaultdict(set)
    for worker, nodeid in re.findall(r"^\[(gw\d+)\] \[ *\d+%\] PASSED (\S+)", out.stdout, re.M):
        workers[nodeid.split("::")[0]].add(worker)
    assert set(workers) == set(FILES), out.stdout[-2000:]
    assert all(len(w) == 1 for w in workers.values()), dict(workers)
