"""The README keeps up with the code: every fault mode and invariant type has its line, the two
commands come first."""

from __future__ import annotations

import typing

from flakeproxy.faults import ContextAttack, LlmFault, ToolFault
from flakeproxy.invariants import AnyInvariant
from tests.conftest import REPO

README = (REPO / "README.md").read_text()


def _tags(union: typing.Any, key: str) -> set[str]:
    return {
        t for m in typing.get_args(typing.get_args(union)[0]) for t in typing.get_args(m.model_fields[key].annotation)
    }


def test_every_mode_and_type_has_a_line() -> None:
    names = (
        _tags(ToolFault, "mode") | _tags(LlmFault, "mode") | _tags(ContextAttack, "type") | _tags(AnyInvariant, "type")
    )
    missing = [n for n in sorted(names) if f"| `{n}` |" not in README]
    assert missing == []


def test_the_two_commands_come_first() -> None:
    block = README.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in block.strip().splitlines()] == [
        "bash scripts/demo",
        "bash scripts/test",
    ]
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert ci[-2:] == ["bash scripts/test", "bash scripts/test-containers"]  # the README's command, then the containers


def test_every_mutation_type_and_profile_has_a_line() -> None:
    from flakeproxy.config.pillars import DEFAULT_WEIGHTS, LLM_TYPES, RULE_TYPES
    from flakeproxy.planning.profiles import PROFILES

    for kind in (*RULE_TYPES, *LLM_TYPES):
        source = "rule" if kind in RULE_TYPES else "LLM (`model:`)"
        assert f"| `{kind}` | {source} | {DEFAULT_WEIGHTS[kind]:g} |" in README, kind
    missing = [name for name in PROFILES if f"| `{name}` | {PROFILES[name]['description']}" not in README]
    assert missing == []
