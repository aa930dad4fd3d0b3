"""Imports point one way: the core (flakeproxy/) never imports mitmproxy."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.conftest import REPO

CORE = REPO / "flakeproxy"


def _imports(nodes: list[ast.AST]) -> list[str]:
    names: list[str] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_core_sources_never_import_mitmproxy() -> None:
    """Nowhere in flakeproxy/; the addons only from inside a CLI command that needs the proxy."""
    offenders = []
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        everywhere = _imports(list(ast.walk(tree)))
        top_level = _imports(list(tree.body))
        rel = path.relative_to(REPO)
        offenders += [f"{rel}: {n}" for n in everywhere if n.split(".")[0] == "mitmproxy"]
        addons_scope = top_level if rel.parts[1] == "cli" else everywhere
        offenders += [f"{rel}: {n}" for n in addons_scope if n.startswith("flakeproxy.addons")]
    assert offenders == []


def test_importing_the_core_loads_no_mitmproxy() -> None:
    code = (
        "import sys, flakeproxy, flakeproxy.cli.main, flakeproxy.config, flakeproxy.faults, flakeproxy.invariants;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'mitmproxy'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert out.stdout.strip() == "[]"
