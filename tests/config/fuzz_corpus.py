"""A seeded corpus of broken configs: the examples and BASE, mutated (deletions, type swaps, huge values,
unicode, deep nesting, aliases, NUL bytes, duplicate keys, truncation). `corpus()` is deterministic for a
seed, so a failing case is replayed with `corpus(SEED)[index]`."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml

from tests.config.base_config import BASE

SEED = 20261123
SIZE = 300
REPO = Path(__file__).resolve().parents[2]

Doc = Any


def bases() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((REPO / "examples").rglob("*.yaml"))]
    return [BASE, *texts]


def _paths(data: Doc, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _paths(v, (*prefix, i))
    return out


def _parent(data: Doc, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        data = data[step]
    return data


UNICODE = ["héllo wörld", "日本語のテキスト", "🙂🔥💥", "\u202eevil\u202c", "Ω≈ç√∫", "\u00a0\u2003", "e\u0301"]


def _value(rng: random.Random) -> Any:
    return rng.choice(
        [
            None,
            True,
            0,
            -1,
            -(10**30),
            10**30,
            1e308,
            float("inf"),
            float("nan"),
            "",
            "x" * 100_000,
            rng.choice(UNICODE),
            [],
            {},
            ["a", 1, None],
            {"k": "v"},
            {"type": "nonsense"},
            {"mode": "error"},
            "${UNSET_VAR}",
            "$$",
            "{prompt}",
            "127.0.0.1:99999",
            "http://",
            list(range(5000)),
        ]
    )


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def mutate_data(data: Doc, rng: random.Random) -> Doc:
    """One structural mutation at a random place in the parsed document."""
    paths = [p for p in _paths(data) if p]
    if not paths:
        return _value(rng)
    path = rng.choice(paths)
    parent, key = _parent(data, path), path[-1]
    op = rng.choice(["delete", "swap", "swap", "rename", "deep", "unicode_key", "duplicate_item"])
    if op == "delete":
        del parent[key]
    elif op == "swap":
        parent[key] = _value(rng)
    elif op == "rename" and isinstance(parent, dict):
        parent[str(key)[:-1] or "x"] = parent.pop(key)
    elif op == "deep":
        parent[key] = _deep(rng.choice([10, 40, 70, 200]))
    elif op == "unicode_key" and isinstance(parent, dict):
        parent[rng.choice(UNICODE)] = parent.pop(key)
    elif op == "duplicate_item" and isinstance(parent, list):
        parent.append(parent[key])
    return data


def _bomb(levels: int) -> str:
    lines = ['b0: &b0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        lines.append(f"b{i}: &b{i} [" + ", ".join([f"*b{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def mutate_text(text: str, rng: random.Random) -> str:
    """One textual mutation: things a parsed document cannot express."""
    op = rng.choice(["nul", "bomb", "self_alias", "dup_key", "truncate", "flip", "tab", "bigint", "deep_flow", "ctrl"])
    lines = text.splitlines(keepends=True)
    at = rng.randrange(len(text) + 1)
    if op == "nul":
        return text[:at] + "\x00" + text[at:]
    if op == "bomb":
        return text + _bomb(rng.choice([3, 6, 9]))
    if op == "self_alias":
        return text + rng.choice(["loop: &loop [*loop]\n", "loop: &loop {a: *loop}\n", "x: *nowhere\n"])
    if op == "dup_key" and lines:
        i = rng.randrange(len(lines))
        return "".join([*lines[: i + 1], lines[i], *lines[i + 1 :]])
    if op == "truncate":
        return text[:at]
    if op == "flip" and text:
        i = rng.randrange(len(text))
        return text[:i] + rng.choice(":[]{}&*!|>'\"#%@`-?,") + text[i + 1 :]
    if op == "tab" and lines:
        i = rng.randrange(len(lines))
        lines[i] = "\t" + lines[i]
        return "".join(lines)
    if op == "bigint":
        return text + f"huge: {'7' * rng.choice([20, 4300, 5000, 20000])}\n"
    if op == "deep_flow":
        n = rng.choice([50, 500, 5000])
        return text + "deep: " + "[" * n + "]" * n + "\n"
    return text[:at] + rng.choice(["\x07", "\x1b[31m", "\ufeff", "\ud800", "\x85", "\u2028"]) + text[at:]


def corpus(seed: int = SEED, size: int = SIZE) -> list[str]:
    rng = random.Random(seed)
    sources = bases()
    out = []
    for _ in range(size):
        text = rng.choice(sources)
        if rng.random() < 0.6:
            data = yaml.safe_load(text)
            for _ in range(rng.randint(1, 3)):
                data = mutate_data(data, rng)
            try:
                text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=10**6)
            except RecursionError:  # too deep for the dumper itself: nest it in the text instead
                text = mutate_text(text, rng)
        if rng.random() < 0.6:
            text = mutate_text(text, rng)
        out.append(text)
    return out
