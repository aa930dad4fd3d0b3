"""Safe YAML loading that remembers the line of every key, and ${VAR} expansion."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, NoReturn

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


#: libyaml's parser and composer where PyYAML has them (its wheels do), with PyYAML's own safe constructor: the
#: pure-Python ones took 5 s for a 6 MB session file and ~10 ms for a config (read twice at each run's start)
SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_DEPTH = 64  # levels of nesting, counting what aliases bring in
MAX_NODES = 100_000  # values that aliases add to the document once expanded
MAX_INT_DIGITS = 1000


def _check_depth(text: str, name: str, loader_class: type[yaml.SafeLoader]) -> None:
    """Reject deep nesting from the event stream, before the (recursive) composer sees it."""
    depth = 0
    for event in yaml.parse(text, Loader=loader_class):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else 1
                raise ConfigError(f"{name} line {line}: nested more than {MAX_DEPTH} levels deep; flatten it")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_graph(root: yaml.Node, name: str) -> None:
    """Reject alias cycles, alias bombs (what aliases add once expanded: a document's own values, however many,
    are not a bomb) and nesting that aliases make deep; iterative."""
    size: dict[int, int] = {}  # values in a node once every alias in it is expanded
    depth: dict[int, int] = {}
    claimed: set[int] = set()  # nodes met once as a child: met again, they are an alias's
    added = 0  # values the aliases add to the document once expanded
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            kids = _children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            open_.discard(key)
            for kid in kids:
                if id(kid) in claimed:
                    added += size[id(kid)]
                claimed.add(id(kid))
            line = node.start_mark.line + 1
            if added > MAX_NODES:
                raise ConfigError(
                    f"{name} line {line}: aliases expand to more than {MAX_NODES} values (an alias bomb?); "
                    "write the values out or use fewer aliases"
                )
            if depth[key] > MAX_DEPTH:
                raise ConfigError(
                    f"{name} line {line}: nested more than {MAX_DEPTH} levels deep once aliases are expanded; "
                    "flatten it"
                )
            continue
        if key in size:
            continue
        if key in open_:
            raise ConfigError(
                f"{name} line {node.start_mark.line + 1}: an alias refers to itself (a cycle); "
                "an anchor cannot contain its own alias"
            )
        if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":int"):
            digits = sum(ch.isdigit() for ch in node.value)
            if digits > MAX_INT_DIGITS:
                raise ConfigError(
                    f"{name} line {node.start_mark.line + 1}: an integer of {digits} digits is too long; "
                    "quote it if it is text"
                )
        open_.add(key)
        stack.append((node, True))
        stack.extend((kid, False) for kid in _children(node))


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def parse_yaml(text: str, name: str) -> Source:
    """Parse with the safe loader; syntax errors become one-line ConfigErrors with the line (of a `.json` file,
    said as JSON's: JSON is read as the YAML it also is). A text libyaml cannot parse is parsed again by PyYAML's
    own loader, whose messages say more (the tab, the alias's name) at the right line: only a broken file pays.

    Deep nesting, alias cycles and alias bombs are refused before any value is built.
    """
    if SAFE_LOADER is not yaml.SafeLoader:
        try:
            return _parse(text, name, SAFE_LOADER)
        except yaml.YAMLError:
            pass
    try:
        return _parse(text, name, yaml.SafeLoader)
    except yaml.YAMLError as e:
        _say(e, text, name)


def _parse(text: str, name: str, loader_class: type[yaml.SafeLoader]) -> Source:
    """The document and its lines; PyYAML's (or libyaml's) errors as they come, ours as ConfigErrors."""
    node = None
    try:
        _check_depth(text, name, loader_class)
        loader = loader_class(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _check_graph(node, name)
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except (ValueError, OverflowError) as e:
        raise ConfigError(f"{name}: a value cannot be read ({_one_line(str(e))}); quote it if it is text") from e
    source = Source(name, data)
    if node is not None:
        _walk(node, (), source.lines, name)
    return source


def _say(e: yaml.YAMLError, text: str, name: str) -> NoReturn:
    """PyYAML's error as one line with its line and the fix."""
    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        problem = _one_line(" ".join(filter(None, [e.context, e.problem])))
        if name.lower().endswith(".json"):
            raise ConfigError(f"{name} line {line}: JSON syntax error: {problem}; check brackets and commas") from e
        raise ConfigError(f"{name} line {line}: YAML syntax error: {problem}; check indentation and quoting") from e
    if isinstance(e, yaml.reader.ReaderError):
        line = text[: e.position].count("\n") + 1
        code = e.character if isinstance(e.character, int) else ord(str(e.character)[:1] or "\0")
        raise ConfigError(
            f"{name} line {line}: character U+{code:04X} is not allowed in YAML; remove it, or write it as an "
            'escape in a double-quoted string (e.g. "\\x00")'
        ) from e
    problem = _one_line(str(e))
    raise ConfigError(f"{name}: YAML error: {problem}; remove control characters or fix the quoting") from e


def variables_in(text: str) -> list[str]:
    """The ${VAR} names a string reads from the environment, in order ($$ is a literal $, no variable)."""
    return [m.group(1) for m in _VAR.finditer(text) if m.group(1)]


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
