"""Imports point one way: the core (flakeproxy/) never imports mitmproxy."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

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


# The three source folders under their installed package names (pyproject's package-dir).
PACKAGES = {
    "flakeproxy": REPO / "flakeproxy",
    "flakeproxy.addons": REPO / "addons",
    "flakeproxy.runner": REPO / "runner",
}


def _module_files() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for package, root in PACKAGES.items():
        for path in root.rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            modules[".".join([package, *parts])] = path
    return modules


def _run_time_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import that runs, deferred ones in functions included; `if TYPE_CHECKING:` blocks never run."""
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom) and id(n) not in skipped]


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The flakeproxy modules `name` imports: `from pkg import sub` is the module sub, `from pkg import obj` the
    package (its __init__). Loading a package's parents on the way is Python's doing, not a dependency."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _run_time_imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        subs = {f"{base}.{a.name}" for a in node.names} & modules.keys()
        found |= subs if len(subs) == len(node.names) else subs | {base}
    return (found & modules.keys()) - {name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while (member := stack.pop()) != node:
                        on_stack.discard(member)
                        component.append(member)
                    on_stack.discard(node)
                    if component:
                        found.append(sorted([node, *component]))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_no_import_circle_among_flakeproxy_modules() -> None:
    """Imports point one way: a circle (config/model -> crosscheck -> profiles -> config/model once) works only
    while every module in it happens to be imported in one order, and breaks on the next innocent import."""
    modules = _module_files()
    graph = {name: _edges(name, path, modules) for name, path in modules.items()}
    assert _cycles(graph) == []


def test_the_cycle_check_can_fail() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


#: Where code may not write a control-API path itself: it names a route of flakeproxy.control_api instead. The tests
#: of the HTTP surface (tests/addons, tests/hardening ...) keep literal paths on purpose: they pin the wire.
ROUTE_FREE = ["flakeproxy", "addons", "runner", "tests/support", "bench"]


def _route_prefixes() -> set[str]:
    from flakeproxy import control_api

    return {"/" + route.template.split("/")[1] for route in control_api.ROUTES} | {"/cells"}


#: Paths other services have too (the agents' POST /reset, Phoenix's /healthz): a route of the proxy only
#: when written with its method.
SHARED_NAMES = {"/reset", "/healthz"}


def _literal_paths(tree: ast.AST) -> list[tuple[int, str]]:
    """String constants (the literal parts of f-strings too) that are not docstrings."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.append((node.lineno, node.value))
    return sorted(set(found))  # an f-string's leading text is met twice


def _names_a_route(text: str, prefixes: set[str]) -> bool:
    words = text.split()
    methods = {"GET", "PUT", "POST", "DELETE"}
    for i, word in enumerate(words[:2]):
        for prefix in prefixes:
            named = word == prefix or word.startswith((prefix + "/", prefix + "?"))
            if named and (prefix not in SHARED_NAMES or (i == 1 and words[0] in methods)):
                return True
    return False


def _route_strings(folders: list[str]) -> list[str]:
    prefixes = _route_prefixes()
    offenders = []
    for folder in folders:
        for path in (REPO / folder).rglob("*.py"):
            rel = path.relative_to(REPO).as_posix()
            if rel == "flakeproxy/control_api.py":
                continue
            for line, text in _literal_paths(ast.parse(path.read_text(), str(path))):
                if _names_a_route(text, prefixes):
                    offenders.append(f"{rel}:{line}: {text[:60]!r}")
    return offenders


def test_no_route_string_outside_the_control_api_module() -> None:
    """Routes are written once (flakeproxy/control_api.py); the addon, the runner's client, the test client and the
    benchmarks name them from there, so a renamed route cannot leave a caller on the old path."""
    assert _route_strings(ROUTE_FREE) == []


def test_the_route_check_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "m.py").write_text(
        '"""GET /journal in a docstring is fine."""\n'
        'x = f"/episodes/{1}/end"\ny = "/journal"\nz = "POST /reset"\nw = "/reset"\n'
    )
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert _route_strings(["."]) == ["m.py:2: '/episodes/'", "m.py:3: '/journal'", "m.py:4: 'POST /reset'"]


#: The agent config models and adapters: which one an agent is gets asked only by the registry that makes it.
AGENT_CLASSES = {
    "AgentBase",
    "HttpAgent",
    "CommandAgent",
    "PythonAgent",
    "HttpAdapter",
    "CommandAdapter",
    "PythonAdapter",
}
REGISTRY = "runner/agents/__init__.py"


def _isinstance_on(tree: ast.AST, names: set[str]) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            checked = node.args[1] if len(node.args) > 1 else None
            named = {n.id for n in ast.walk(checked) if isinstance(n, ast.Name)} if checked else set()
            named |= {n.attr for n in ast.walk(checked) if isinstance(n, ast.Attribute)} if checked else set()
            lines += [node.lineno] if named & names else []
    return lines


def test_no_isinstance_on_agent_classes_outside_the_registry() -> None:
    """What differs between kinds of agent is asked of the adapter (its ports, its reset) or of the config model
    (its tool names), so a new kind is one config model and one adapter module, not edits across the runner."""
    offenders = [
        f"{path.relative_to(REPO).as_posix()}:{line}"
        for folder in ("flakeproxy", "addons", "runner")
        for path in (REPO / folder).rglob("*.py")
        if path.relative_to(REPO).as_posix() != REGISTRY
        for line in _isinstance_on(ast.parse(path.read_text(), str(path)), AGENT_CLASSES)
    ]
    assert offenders == []


def test_the_isinstance_check_can_fail() -> None:
    tree = ast.parse("isinstance(a, PythonAdapter)\nisinstance(a, (x.HttpAgent, int))\nisinstance(a, int)\n")
    assert _isinstance_on(tree, AGENT_CLASSES) == [1, 2]


def test_the_type_checked_tree_links_every_module() -> None:
    """mypy checks typecheck/flakeproxy (pyproject [tool.mypy] files): the installed layout as symlinks, since it
    cannot follow addons/ and runner/ into flakeproxy.addons and flakeproxy.runner through an editable install. A
    module of flakeproxy/ without its link there would silently go unchecked."""
    tree = REPO / "typecheck" / "flakeproxy"
    wanted = {
        p.name: p for p in CORE.iterdir() if p.name != "__pycache__" and (p.is_dir() or p.suffix in (".py", ".typed"))
    }
    wanted |= {"addons": REPO / "addons", "runner": REPO / "runner"}
    links = {p.name: p for p in tree.iterdir()}
    assert sorted(links) == sorted(wanted)
    assert [n for n, p in links.items() if not p.is_symlink() or p.resolve() != wanted[n].resolve()] == []
