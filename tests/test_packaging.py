"""Every package folder is installed, under flakeproxy.*, and nothing generic lands at the top level; the
built wheel, installed into a fresh venv, runs a contract (proxy child included) from any folder."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from flakeproxy.runner.proxy_child import proxy_command
from tests.conftest import REPO
from tests.runner.world import MATRIX, world
from tests.support.wheel import installed_bin, user_env


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


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installed_bin(tmp_path_factory)


@pytest.mark.timeout(240)
@pytest.mark.parametrize(("kind", "expected"), [("careful", 0), ("naive", 1)])
def test_installed_wheel_runs_a_contract_from_the_repo_root_and_elsewhere(
    installed: Path, tmp_path: Path, kind: str, expected: int
) -> None:
    """`flakeproxy contract run` starts the proxy as a child; from a clone's root the source folder
    flakeproxy/ (without addons/ and runner/) must not shadow the installed package."""
    matrix = [{"name": "no-chaos"}, MATRIX[1]]
    with world(tmp_path / "world", kind=kind, matrix=matrix) as w:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        for cwd in (REPO, elsewhere):
            out = subprocess.run(
                [str(installed / "flakeproxy"), "contract", "run", "-c", str(w.config)],
                capture_output=True,
                text=True,
                cwd=cwd,
                timeout=90,
                env=user_env(),
            )
            assert "No module named" not in out.stderr, f"from {cwd}: {out.stderr[-1500:]}"
            assert out.returncode == expected, f"from {cwd}: exit {out.returncode}: {out.stderr[-1500:]}"
            assert "resilience score" in out.stdout


def test_the_proxy_child_refuses_a_different_flakeproxy(tmp_path: Path) -> None:
    """The child checks that it imported the runner's own package (here PYTHONPATH points elsewhere)."""
    fake = tmp_path / "shadow" / "flakeproxy"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    env = {**os.environ, "PYTHONPATH": str(fake.parent)}
    out = subprocess.run(proxy_command("x.yaml"), capture_output=True, text=True, cwd=tmp_path, env=env, timeout=30)
    assert out.returncode == 1
    assert out.stderr.startswith(f"error: the proxy would import flakeproxy from {fake}, not from ")
    assert "unset PYTHONPATH" in out.stderr
