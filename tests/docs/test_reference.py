"""The generated reference pages (docs/reference/, scripts/docs_ref.py) match the code, and the catalogues hold
every fault mode, invariant type, mutation weight, profile, control route and command."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

from scripts import docs_ref
from tests.conftest import REPO

DOCS = REPO / "docs"


def _page(name: str) -> str:
    return (DOCS / "reference" / name).read_text()


def test_the_reference_pages_regenerate_identically() -> None:
    assert docs_ref.stale() == [], "run .venv/bin/python scripts/docs_ref.py and commit docs/reference/"


def test_a_change_in_the_code_makes_its_page_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flakeproxy.faults.reset import ResetFault

    for name, text in docs_ref.render_all().items():
        (tmp_path / name).write_text(text)
    assert docs_ref.stale(tmp_path) == []
    monkeypatch.setattr(ResetFault, "__doc__", "Close the connection, now described differently.")
    assert docs_ref.stale(tmp_path) == ["faults.md"]


def _tags(union: typing.Any, key: str) -> set[str]:
    return {
        t for m in typing.get_args(typing.get_args(union)[0]) for t in typing.get_args(m.model_fields[key].annotation)
    }


def _catalogue_names(page: str) -> set[str]:
    """The names in the first column of a catalogue table (`slow` / `latency` gives both)."""
    rows = re.findall(r"^\| (`[^|]+`) \|", page, re.M)
    return {name for row in rows for name in re.findall(r"`([^`]+)`", row)}


def test_every_fault_mode_and_invariant_type_has_its_row() -> None:
    from flakeproxy.faults import ContextAttack, LlmFault, ToolFault
    from flakeproxy.invariants import AnyInvariant

    modes = _tags(ToolFault, "mode") | _tags(LlmFault, "mode") | _tags(ContextAttack, "type")
    assert modes - _catalogue_names(_page("faults.md")) == set()
    assert _tags(AnyInvariant, "type") - _catalogue_names(_page("invariants.md")) == set()


def test_every_mutation_type_and_profile_has_its_row() -> None:
    from flakeproxy.config.pillars import DEFAULT_WEIGHTS, LLM_TYPES, RULE_TYPES
    from flakeproxy.planning.profiles import PROFILES

    mutations = _page("mutations.md")
    for kind in (*RULE_TYPES, *LLM_TYPES):
        source = "rule" if kind in RULE_TYPES else "LLM (`model:`)"
        assert f"| `{kind}` | {source} | {DEFAULT_WEIGHTS[kind]:g} |" in mutations, kind
    profiles = _page("profiles.md")
    assert [n for n in PROFILES if f"| `{n}` | {PROFILES[n]['description']}" not in profiles] == []


def test_every_control_route_is_explained_on_the_proxy_page() -> None:
    routes = re.findall(r"^\| (GET|PUT|POST|DELETE|PATCH) \| `([^`]+)` \|", _page("control-api.md"), re.M)
    assert len(routes) >= 10
    proxy = (DOCS / "proxy.md").read_text()
    assert [f"{m} {p}" for m, p in routes if f"`{m} {p}" not in proxy] == []


def test_every_command_has_its_line_on_the_commands_page() -> None:
    from flakeproxy.cli.main import cli

    commands = (DOCS / "commands.md").read_text()
    assert [name for name in cli.commands if f"`flakeproxy {name}" not in commands] == []
    assert all(f"## `flakeproxy {name}`" in _page("cli.md") for name in cli.commands)


def test_the_routes_page_lists_exactly_the_declared_routes() -> None:
    from flakeproxy.control_api import ROUTES

    routes = re.findall(r"^\| (GET|PUT|POST|DELETE|PATCH) \| `([^`]+)` \|", _page("control-api.md"), re.M)
    assert sorted(f"{m} {p}" for m, p in routes) == sorted(str(r) for r in ROUTES)
