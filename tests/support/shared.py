"""What the test processes of one run share (pytest-xdist starts one per worker): a file lock around building or
installing something once, and the folder one run's workers share."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def locked(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock on lock_file (made if missing) across processes: the second worker to want a wheel,
    an npm folder or a venv waits for the first to finish it, then finds it done."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_folder(factory: pytest.TempPathFactory) -> Path:
    """A folder shared by every worker of this test run, and by this run alone: the parent of the workers' base
    temp folders under xdist (pytest-N/ above popen-gw0/), the base temp folder itself without."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def worker() -> tuple[int, int]:
    """(this worker's index, the number of workers); (0, 1) without xdist."""
    name, count = os.environ.get("PYTEST_XDIST_WORKER", "gw0"), os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")
    return int(name.removeprefix("gw")), max(int(count), 1)
