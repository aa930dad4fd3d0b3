"""flakeproxy as a user installs it: the wheel built from this checkout, in a fresh venv (not editable).

Built once per test run (about 20 s with a warm pip cache; pip fetches setuptools for the isolated build and the
dependencies from the package registry or its cache): the first xdist worker to need it builds it under a file
lock in the run's shared folder, the others wait and use it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import IN_PROCESS, REPO
from tests.support.shared import locked, run_folder

SOURCES = ("pyproject.toml", "README.md", "flakeproxy", "addons", "runner")
_built: dict[str, Path] = {}


#: what a user's environment lacks: the test venv's, and the suite's in-process proxy (runner/local.py)
NOT_A_USERS = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", IN_PROCESS)


def user_env(**extra: str) -> dict[str, str]:
    """A user's environment: no PYTHONPATH, not inside the test venv, the proxy a child process."""
    env = {k: v for k, v in os.environ.items() if k not in NOT_A_USERS}
    return {**env, **extra}


def installed_bin(factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a fresh venv holding the installed wheel. The sources are copied first so that
    building leaves no build/ folder in the repository."""
    if "bin" in _built:
        return _built["bin"]
    root = run_folder(factory) / "wheel"
    with locked(run_folder(factory) / "wheel.lock"):
        if not (root / "venv" / ".installed").exists():
            shutil.rmtree(root, ignore_errors=True)  # what a worker that failed left
            _build(root)
    _built["bin"] = root / "venv" / "bin"
    return _built["bin"]


def _build(root: Path) -> None:
    src, wheels, venv = root / "src", root / "wheels", root / "venv"
    src.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in SOURCES:
        item = REPO / name
        if item.is_dir():
            shutil.copytree(item, src / name, ignore=ignore)
        else:
            shutil.copy(item, src / name)
    pip = ["-m", "pip", "--disable-pip-version-check", "--quiet"]
    _ok([sys.executable, *pip, "wheel", "--no-deps", "-w", str(wheels), str(src)], root)
    (wheel,) = wheels.glob("flakeproxy-*.whl")
    _ok([sys.executable, "-m", "venv", str(venv)], root)
    _ok([str(venv / "bin" / "python"), *pip, "install", str(wheel)], root)
    (venv / ".installed").write_text(wheel.name)


def _ok(args: list[str], cwd: Path) -> None:
    out = subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=150, env=user_env())
    assert out.returncode == 0, f"{args[:5]}: {out.stderr[-2000:]}"
