"""Imports point one way: the core (flakeproxy/) never imports mitmproxy."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.conftest import REPO

CORE = REPO / "flakeproxy"


def test_core_sources_never_import_mitmproxy() -> None:
    offenders = []
    for path in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] == "mitmproxy"]
            offenders += [f"{path.relative_to(REPO)}: {n}" for n in names if n.startswith("flakeproxy.addons")]
    assert offenders == []


def test_importing_the_core_loads_no_mitmproxy() -> None:
    code = (
        "import sys, flakeproxy, flakeproxy.cli.main, flakeproxy.config, flakeproxy.faults, flakeproxy.invariants;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'mitmproxy'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert out.stdout.strip() == "[]"
