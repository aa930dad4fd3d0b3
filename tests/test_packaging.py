"""Every package folder is installed, under flakeproxy.*, and nothing generic lands at the top level."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import REPO


def _declared() -> tuple[list[str], dict[str, str]]:
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    return setuptools["packages"], setuptools["package-dir"]


def test_every_package_folder_is_declared() -> None:
    packages, package_dir = _declared()
    folders = {dotted: REPO / folder for dotted, folder in package_dir.items()}
    found = set()
    for top, root in folders.items():
        for init in root.rglob("__init__.py"):
            rel = init.parent.relative_to(root).parts
            found.add(".".join((top, *rel)))
    assert found == set(packages)


def test_addons_and_runner_install_under_flakeproxy(tmp_path: Path) -> None:
    """As installed (run away from the repo, -P keeps the cwd off sys.path)."""
    code = (
        "import importlib.util as u, flakeproxy.addons, flakeproxy.runner;"
        "print(u.find_spec('addons'), u.find_spec('runner'), flakeproxy.addons.__name__)"
    )
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["None", "None", "flakeproxy.addons"]
