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


def _applied_defaults(tree: ast.AST) -> list[int]:
    """Lines that read a fault's `applied` from a mapping with a default (`x.get("applied", ...)`) or by key."""
    lines = []
    for node in ast.walk(tree):
        is_get = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
        if is_get and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "applied":
            lines.append(node.lineno)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "applied":
            lines.append(node.lineno)
    return lines


def test_no_reader_guesses_whether_a_fault_applied() -> None:
    """Whether a fault applied is read from a FaultRecord (flakeproxy.wire.record), where it has no default;
    reading it out of a dict, with a default or without, is how five readers once counted unknowns as applied."""
    offenders = [
        f"{path.relative_to(REPO)}:{line}"
        for folder in ("flakeproxy", "addons", "runner")
        for path in (REPO / folder).rglob("*.py")
        for line in _applied_defaults(ast.parse(path.read_text(), str(path)))
    ]
    assert offenders == [], "read `applied` through read_fault() / Episode.faults(), not a dict"
