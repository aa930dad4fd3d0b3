"""Session files: YAML (or JSON), one session or a list of them; found from files, folders and globs.

A bad file is a one-line ConfigError (exit 2) naming the file, the line, the key and the fix.
"""

from __future__ import annotations

import glob
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from flakeproxy.config.problems import explain_without_values
from flakeproxy.config.reading import MIB, check_regular, read_text
from flakeproxy.config.replays import Session
from flakeproxy.config.yamlsource import Source, parse_yaml
from flakeproxy.errors import ConfigError
from flakeproxy.safe_text import escaped_tree

SUFFIXES = (".yaml", ".yml", ".json")
#: The largest session file read (a recording keeps whole bodies).
MAX_SESSION_BYTES = 64 * MIB


def _files(source: str, near: Path) -> list[Path]:
    path = Path(source) if Path(source).is_absolute() else near / source
    if any(ch in source for ch in "*?["):
        found = sorted(Path(p) for p in glob.glob(str(path), recursive=True))
        return [p for p in found if p.is_file() and p.suffix in SUFFIXES]
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
    if not path.exists():
        raise ConfigError(f"{source}: no such session file or folder (looked at {path}); fix the path in sources")
    check_regular(path, "session file", MAX_SESSION_BYTES)  # not /dev/zero, a FIFO, a huge file
    return [path]


def load_session_file(path: Path) -> list[Session]:
    """The sessions of one file; a mapping is one session, a list is several."""
    text = read_text(path, "session file", MAX_SESSION_BYTES)  # a regular file, bounded, never echoed
    source = _json(text, path) if path.suffix.lower() == ".json" else parse_yaml(text, str(path))
    items = source.data if isinstance(source.data, list) else [source.data]
    sessions = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            got = "an empty file" if item is None else f"a {type(item).__name__}"
            raise ConfigError(f"{path} line 1: a session must be a mapping with id: and input:, got {got}")
        try:
            sessions.append(Session.model_validate(item))
        except ValidationError as e:
            if not source.lines:  # read as JSON: the lines of its keys, for the message, now
                source = parse_yaml(text, str(path))
            message = explain_without_values(e, source, Session)
            if isinstance(source.data, list):  # the error's key path is within item n
                message = message.replace(f"{path} line", f"{path} (session {n + 1}) line", 1)
            raise ConfigError(message) from e
    return sessions


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKey
    return out


def _json(text: str, path: Path) -> Source:
    """A .json session file read as JSON (a recording's tens of MB: ~30x faster than as YAML, and strict: a
    trailing comma is an error); its keys' lines only when a message needs them. Duplicate keys, nesting too deep
    or an integer too long are said as the YAML reader says them, with the line."""
    try:
        return Source(str(path), json.loads(text, object_pairs_hook=_no_duplicates))
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path} line {e.lineno}: JSON syntax error: {e.msg}; check brackets and commas") from e
    except (ValueError, RecursionError):
        return parse_yaml(text, str(path))  # which says what is wrong, with the line


def load_sessions(sources: Iterable[str], near: Path) -> list[tuple[Session, str]]:
    """Every session of the sources (files, folders, globs relative to `near`), with the file it came from."""
    out: list[tuple[Session, str]] = []
    for source in sources:
        files = _files(source, near)
        if not files:
            raise ConfigError(f"{source}: no session files (*.yaml, *.yml, *.json) there; fix the path or glob")
        for path in files:
            out += [(s, str(path)) for s in load_session_file(path)]
    ids = [s.id for s, _ in out]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ConfigError(f"session id {twice[0]!r} is used by more than one session; give each an id of its own")
    return out


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80] or "session"


def write_session(folder: Path, session: Session) -> Path:
    """Write a session as <folder>/<slug of its id>.yaml (a suffix if the name is taken); its path."""
    folder.mkdir(parents=True, exist_ok=True)
    base = slug(session.id)
    path, n = folder / f"{base}.yaml", 1
    while path.exists():
        n += 1
        path = folder / f"{base}-{n}.yaml"
    data = session.model_dump(mode="json", exclude_defaults=True)
    data = escaped_tree({"id": session.id, "input": session.input, **data})  # any text the agent gave
    header = "# a flakeproxy replay session (flakeproxy replay run); secrets are redacted\n"
    path.write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")
    return path
