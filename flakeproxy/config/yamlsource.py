"""Safe YAML loading that remembers the line of every key, and ${VAR} expansion."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from flakeproxy.errors import ConfigError

Path = tuple[str | int, ...]
_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class Source:
    """A parsed YAML document and the 1-based line of each key path in it."""

    name: str
    data: Any
    lines: dict[Path, int] = field(default_factory=dict)

    def line_of(self, path: Path) -> int:
        """The line of path, or of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return 1


def format_path(path: Path) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out or "(top level)"


def _walk(node: yaml.Node, path: Path, lines: dict[Path, int], source: str) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                where = format_path((*path, key))
                raise ConfigError(
                    f"{source} line {key_node.start_mark.line + 1}: {where}: duplicate key {key!r}; keep one"
                )
            seen.add(key)
            lines[(*path, key)] = key_node.start_mark.line + 1
            _walk(value_node, (*path, key), lines, source)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), lines, source)


def parse_yaml(text: str, name: str) -> Source:
    """Parse with the safe loader; syntax errors become one-line ConfigErrors with the line."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        problem = " ".join(filter(None, [e.context, e.problem]))
        raise ConfigError(f"{name} line {line}: YAML syntax error: {problem}; check indentation and quoting") from e
    except yaml.YAMLError as e:
        raise ConfigError(f"{name}: YAML error: {e}") from e
    finally:
        loader.dispose()
    source = Source(name, data)
    if node is not None:
        _walk(node, (), source.lines, name)
    return source


def expand_env(source: Source, environ: dict[str, str] | None = None) -> Any:
    """Replace ${VAR} in every string from the environment ($$ is a literal $); unset is an error."""
    env = os.environ if environ is None else environ

    def expand(value: Any, path: Path) -> Any:
        if isinstance(value, dict):
            return {k: expand(v, (*path, k)) for k, v in value.items()}
        if isinstance(value, list):
            return [expand(v, (*path, i)) for i, v in enumerate(value)]
        if not isinstance(value, str) or "$" not in value:
            return value

        def one(m: re.Match[str]) -> str:
            if m.group(0) == "$$":
                return "$"
            var = m.group(1)
            if var not in env:
                raise ConfigError(
                    f"{source.name} line {source.line_of(path)}: {format_path(path)}: environment variable "
                    f"{var} is not set; export it (e.g. export {var}=...) or write the value"
                )
            return env[var]

        return _VAR.sub(one, value)

    return expand(source.data, ())
