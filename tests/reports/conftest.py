"""The demo's results for both agents (the run's one `flakeproxy demo`), and a copy helper to plant data in them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from flakeproxy.results import RunResult
from tests.reports.browser import chromium as find_chromium
from tests.support.demo import DemoRun

AGENTS = ("careful", "naive")


@pytest.fixture(scope="session")
def demo_dir(demo_command: DemoRun) -> Path:
    """The folder of the run's one `flakeproxy demo` (tests/support/demo.py), read only."""
    assert demo_command.returncode == 0, demo_command.stdout + demo_command.stderr
    return demo_command.folder


@pytest.fixture(scope="session")
def demo_ci(demo_dir: Path) -> dict[str, RunResult]:
    """The demo's results as it writes them: a `flakeproxy ci` run (the contract and the other pillars)."""
    return {name: RunResult.model_validate_json((demo_dir / name / "results.json").read_text()) for name in AGENTS}


@pytest.fixture(scope="session")
def demo(demo_ci: dict[str, RunResult]) -> dict[str, RunResult]:
    """The same runs as `contract run` leaves them: the contract's episodes and cells, no ci section."""
    return {
        name: result.model_copy(
            update={
                "ci": None,
                "replay": None,
                "episodes": [e for e in result.episodes if e.purpose not in ("mutation", "chaos", "replay")],
            }
        )
        for name, result in demo_ci.items()
    }


@pytest.fixture
def saved(tmp_path: Path) -> Callable[[RunResult], Path]:
    """Write a (changed) result as results.json in a fresh folder; return its path."""

    def save(result: RunResult) -> Path:
        path = tmp_path / "results.json"
        path.write_text(result.model_dump_json(indent=2))
        return path

    return save


@pytest.fixture(scope="session")
def chromium() -> str:
    found = find_chromium()
    if found is None:  # scripts/test installs Debian's chromium package where it can (root, apt-get)
        pytest.skip("headless Chromium is missing: apt-get install -y chromium (scripts/test does it as root)")
    return found


def interrupted(result: RunResult) -> RunResult:
    """What an interrupted run leaves: the first scenarios' cells only, no coverage, no score, no ci summary."""
    kept = set(result.scenarios[:2])
    return result.model_copy(
        update={
            "complete": False,
            "interrupted_by": "SIGINT",
            "score": None,
            "ci": None,
            "coverage": [],
            "finished_at": None,
            "cells": [c for c in result.cells if c.scenario in kept],
            "episodes": [e for e in result.episodes if e.scenario in kept],
        },
        deep=True,
    )
