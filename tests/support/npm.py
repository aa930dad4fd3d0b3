"""npm packages for tests, installed once into a cache folder (under a file lock: xdist workers install a folder
once); a test skips, with npm's reason, only when node or npm is missing or the install fails (the registry is
reachable where the suite runs)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.shared import locked

CACHE_ROOT = Path.home() / ".cache" / "flakeproxy-tests"


def npm_packages(folder: str, *specs: str) -> Path:
    """CACHE_ROOT/folder with node_modules holding every package of specs (e.g. "openai@6"); its path."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    cache = CACHE_ROOT / folder
    names = [spec.rsplit("@", 1)[0] if spec.rfind("@") > 0 else spec for spec in specs]
    with locked(CACHE_ROOT / f"{folder}.lock"):
        if not all((cache / "node_modules" / name / "package.json").exists() for name in names):
            _install(cache, specs)
    return cache


def _install(cache: Path, specs: tuple[str, ...]) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    install = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--no-save", "--prefix", str(cache), *specs],
        capture_output=True,
        text=True,
        timeout=180,
    )
    if install.returncode != 0:
        last = (install.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"npm could not install {' '.join(specs)}: {last}")
