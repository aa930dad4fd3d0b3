"""Hostile YAML: a seeded corpus of 300 mutated configs, and the shapes that used to hang or crash.

Every one must end as a one-line ConfigError (or load), in under a second; never a traceback or a hang.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flakeproxy.config import parse_config
from flakeproxy.errors import ConfigError
from tests.config.fuzz_corpus import REPO, SEED, SIZE, corpus

HOSTILE = {
    "alias-bomb": 'version: "2.0"\nb0: &b0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    + "".join(f"b{i}: &b{i} [" + ", ".join([f"*b{i - 1}"] * 9) + "]\n" for i in range(1, 10)),
    "self-alias": 'version: "2.0"\nloop: &loop [*loop]\n',
    "self-alias-map": 'version: "2.0"\nloop: &loop {a: *loop}\n',
    "deep-nesting": 'version: "2.0"\ndeep: ' + "[" * 500 + "]" * 500 + "\n",
    "deep-by-alias": 'version: "2.0"\na0: &a0 '
    + "[" * 40
    + "]" * 40
    + "\n"
    + "".join(f"a{i}: &a{i} " + "[" * 40 + f"*a{i - 1}" + "]" * 40 + "\n" for i in range(1, 12)),
    "nul-byte": 'version: "2.0"\nagent: "a\x00b"\n',
    "5000-digit-int": 'version: "2.0"\nhuge: ' + "9" * 5000 + "\n",
}
MESSAGES = {
    "alias-bomb": r"fuzz\.yaml line \d+: aliases expand to more than 100000 values \(an alias bomb\?\); write the",
    "self-alias": r"fuzz\.yaml line 2: an alias refers to itself \(a cycle\)",
    "self-alias-map": r"fuzz\.yaml line 2: an alias refers to itself \(a cycle\)",
    "deep-nesting": r"fuzz\.yaml line 2: nested more than 64 levels deep; flatten it",
    "deep-by-alias": r"fuzz\.yaml line \d+: nested more than 64 levels deep once aliases are expanded",
    "nul-byte": r"fuzz\.yaml line 2: character U\+0000 is not allowed in YAML; remove it",
    "5000-digit-int": r"fuzz\.yaml line 2: an integer of 5000 digits is too long; quote it if it is text",
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_yaml_is_one_quick_line(case: str) -> None:
    start = time.monotonic()
    with pytest.raises(ConfigError, match=MESSAGES[case]) as info:
        parse_config(HOSTILE[case], "fuzz.yaml", environ={})
    assert time.monotonic() - start < 1.0
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("case", ["alias-bomb", "self-alias", "deep-nesting", "nul-byte", "5000-digit-int"])
def test_hostile_yaml_through_the_cli(tmp_path: Path, case: str) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text(HOSTILE[case], encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "validate", "-c", str(path)],
        capture_output=True,
        text=True,
        timeout=20,
        cwd=REPO,
    )
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"error: {path} line"), done.stderr


def test_corpus_is_seeded() -> None:
    assert corpus(SEED, 20) == corpus(SEED, 20)
    assert len(set(corpus(SEED, SIZE))) > SIZE * 0.75


@pytest.mark.timeout(120)
def test_fuzz_corpus_never_crashes_or_hangs() -> None:
    """Replay one case: `from tests.config.fuzz_corpus import corpus; parse_config(corpus()[INDEX])`."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.config.fuzz_worker", str(SEED), str(SIZE)],
        capture_output=True,
        text=True,
        timeout=110,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == SIZE
    bad = [r for r in rows if r["outcome"] in ("crash", "hang") or r["seconds"] >= 1.0]
    assert not bad, "\n".join(f"corpus()[{r['index']}]: {r['outcome']} {r['message'][-300:]}" for r in bad[:5])
    multi = [r for r in rows if "\n" in r["message"]]
    assert not multi, f"corpus()[{multi[0]['index']}] gave a multi-line error: {multi[0]['message']!r}"
    assert sum(r["outcome"] == "config_error" for r in rows) > SIZE // 2  # the corpus really is broken


def test_corpus_errors_through_the_cli(tmp_path: Path) -> None:
    """A handful of corpus cases through the real CLI: exit 2 and one line on stderr."""
    texts = [t for t in corpus(SEED, 40) if "\ud800" not in t][:6]
    for i, text in enumerate(texts):
        path = tmp_path / f"c{i}.yaml"
        path.write_text(text, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "flakeproxy", "validate", "-c", str(path)],
            capture_output=True,
            text=True,
            timeout=20,
            cwd=REPO,
        )
        lines = done.stderr.splitlines()
        assert done.returncode in (0, 2) and len(lines) <= 1, (i, done.stderr[-1000:])
        assert done.returncode == 0 or lines[0].startswith(f"error: {path}"), done.stderr
