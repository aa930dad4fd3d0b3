"""Turn a pydantic validation error into one line: file, line, key path, bad value, valid choices."""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any, Union

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from flakeproxy.config.crosscheck import CrossCheckError
from flakeproxy.config.yamlsource import Path, Source, format_path

_TAGS = ("type", "mode")
#: union members told apart by their shape (a callable Discriminator), named in loc by their Tag: a model with
#: `shape_tag` (run.replicas: an int, or {min, max} tagged "adaptive")
_SHAPE_TAGS = ("adaptive",)
_BOUNDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}


def _unwrap(tp: Any) -> Any:
    """Strip Annotated and Optional; keep discriminated unions as their list of members."""
    while True:
        if typing.get_origin(tp) is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif typing.get_origin(tp) in (Union, types.UnionType):
            members = [m for m in typing.get_args(tp) if m is not type(None)]
            if len(members) != 1:
                return members
            tp = members[0]
        else:
            return tp


def _tag_values(model: type[BaseModel]) -> list[str]:
    for tag in _TAGS:
        if tag in model.model_fields:
            return list(typing.get_args(model.model_fields[tag].annotation))
    return []


def type_at(root: type[BaseModel], loc: Path) -> Any:
    """The (unwrapped) type the schema expects at loc, following discriminator tags in loc."""
    tp: Any = root
    for step in loc:
        tp = _unwrap(tp)
        if isinstance(tp, list):
            members = [_unwrap(m) for m in tp]  # a shape-tagged member is Annotated with its Tag
            models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
            tp = next((m for m in models if step in (*_tag_values(m), getattr(m, "shape_tag", None), m.__name__)), None)
            if tp is not None:
                continue
            return None
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            field = _field(tp, step)
            if field is None:
                return None
            tp = field
        elif typing.get_origin(tp) is list:
            tp = typing.get_args(tp)[0]
        elif typing.get_origin(tp) is dict:
            tp = typing.get_args(tp)[1]
        else:
            return None
    return _unwrap(tp)


def _field(model: type[BaseModel], name: Any) -> Any:
    for field_name, info in model.model_fields.items():
        if name in (field_name, info.alias):
            return info.annotation
    return None


def _noun(model: Any) -> str:
    names = [base.__name__ for base in getattr(model, "__mro__", ())]
    for base, noun in (("Invariant", "invariant"), ("Fault", "fault"), ("AgentBase", "agent")):
        if base in names:
            return "attack" if noun == "fault" and "type" in model.model_fields else noun
    return "entry"


def _first(errors: list[ErrorDetails]) -> ErrorDetails:
    """The error to show: an unknown key explains a 'missing' one next to it, so it goes first; a union branch the
    value was never meant for (a conversation {id, turns} is not a string) goes last."""
    return sorted(errors, key=lambda e: (_other_branch(e), e["type"] != "extra_forbidden"))[0]


def _other_branch(err: ErrorDetails) -> bool:
    """pydantic's error for the union member of another shape: `golden_prompts.0.str: a valid string`."""
    last = err["loc"][-1] if err["loc"] else None
    return err["type"].endswith("_type") and isinstance(last, str) and _is_member_name(last)


def _is_member_name(step: str) -> bool:
    """A union member as pydantic names it in a loc: a builtin (str, int, list[str]) or a model's class name;
    flakeproxy.yaml's own keys are lower case."""
    return step in ("str", "int", "float", "bool") or step.startswith(("list[", "dict[")) or step[:1].isupper()


def _keys(model: Any) -> list[str]:
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [info.alias or name for name, info in model.model_fields.items()]
    return []


def _home_of(root: type[BaseModel], loc: tuple[Any, ...], bad: Any) -> str | None:
    """Where a tag refused in one list of its owner (a scenario's context_attacks, say) is valid: another list of
    that owner (its tool_faults), said with the key it goes by there; None when it is valid in none."""
    if len(loc) < 2 or not isinstance(loc[-1], int):
        return None
    owner = type_at(root, loc[:-2])
    for name in _keys(owner):
        if name == loc[-2]:
            continue
        members = type_at(root, (*loc[:-2], name, 0))
        for model in members if isinstance(members, list) else []:
            if not (isinstance(model, type) and issubclass(model, BaseModel)):
                continue
            key = next((t for t in _TAGS if t in model.model_fields), None)
            if key is not None and bad in _tag_values(model):
                return f"it is one of {name}, as {{{key}: {bad}, ...}}"
    return None


def _tags(members: Any) -> list[str]:
    if isinstance(members, list):
        return [t for m in members if isinstance(m, type) for t in _tag_values(m)]
    return []


def data_path(data: Any, loc: tuple[Any, ...]) -> Path:
    """The path in the user's data for a pydantic loc (which also holds union tags)."""
    path: list[str | int] = []
    for i, step in enumerate(loc):
        if isinstance(step, str) and _is_member_name(step) and not (isinstance(data, dict) and step in data):
            continue  # the union member pydantic tried, not a key of the user's
        if isinstance(data, dict) and any(data.get(t) == step for t in _TAGS):
            following = loc[i + 1] if i + 1 < len(loc) else None
            # the union's tag, not a key; unless the user has a key of that name the rest of the path is inside
            # (a command agent's `command:` list is both its tag and a key of its own)
            if step not in data or (following in data and not _holds(data[step], following)):
                continue
        if isinstance(data, dict) and step in _SHAPE_TAGS and step not in data:
            continue
        if (isinstance(data, dict) and step in data) or (
            isinstance(data, list) and isinstance(step, int) and step < len(data)
        ):
            data = data[step]
        elif isinstance(data, dict) or data is None:
            data = None
        else:
            continue
        path.append(step)
    return tuple(path)


def _holds(value: Any, step: Any) -> bool:
    return (isinstance(value, dict) and step in value) or (
        isinstance(value, list) and isinstance(step, int) and step < len(value)
    )


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


#: Words users write for the word a key spells, tried before the nearest spelling, which can be a key that means
#: something else: `after_chunks` on a stream_cut is its after_events, not the after_calls difflib picks.
SYNONYMS = {
    "chunks": "events",
    "tokens": "events",
    "messages": "events",
    "lines": "events",
    "requests": "calls",
    "s": "ms",
    "sec": "ms",
    "secs": "ms",
    "seconds": "ms",
    "status": "code",
}


def _synonym(word: str, choices: list[str]) -> str | None:
    """A choice that is word with one of its `_`-separated words put as the keys spell it (SYNONYMS), or None."""
    parts = word.split("_")
    for i, part in enumerate(parts):
        said = SYNONYMS.get(part.lower())
        if said is not None and (candidate := "_".join([*parts[:i], said, *parts[i + 1 :]])) in choices:
            return candidate
    return None


def _suggest(word: Any, choices: list[str]) -> str:
    close = [found] if (found := _synonym(str(word), choices)) else difflib.get_close_matches(str(word), choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _message(err: ErrorDetails, root: type[BaseModel], loc: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
    kind, ctx, value = err["type"], err.get("ctx", {}), err.get("input")
    if kind == "extra_forbidden":
        keys = _keys(type_at(root, loc[:-1]))
        return f"unknown key {loc[-1]!r}{_suggest(loc[-1], keys)}; valid keys: {', '.join(keys)}", loc
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        tag = str(ctx.get("discriminator", "type")).strip("'")
        tags = _tags(type_at(root, loc))
        if kind == "union_tag_not_found":
            keys = [str(k) for k in value] if isinstance(value, dict) else []
            if typo := next((k for k in keys if difflib.get_close_matches(k, [tag], n=1)), None):  # `tpye: regex`
                return f"unknown key {typo!r} (did you mean {tag!r}?); valid {tag}s: {', '.join(tags)}", (*loc, typo)
            return f"missing key {tag!r}; valid {tag}s: {', '.join(tags)}", (*loc, tag)
        bad = ctx.get("tag")
        if (home := _home_of(root, loc, bad)) is not None:
            return f"{tag} {bad!r} does not go in {loc[-2]}: {home}; valid here: {', '.join(tags)}", (*loc, tag)
        return f"unknown {tag} {bad!r}{_suggest(bad, tags)}; valid: {', '.join(tags)}", (*loc, tag)
    if kind == "literal_error":
        choices = [c.strip().strip("'") for c in str(ctx.get("expected", "")).replace(" or ", ", ").split(",")]
        return f"must be one of {', '.join(choices)}, got {_show(value)}{_suggest(value, choices)}", loc
    if kind == "missing":
        owner = type_at(root, loc[:-1])
        what = f" (a {_tag_values(owner)[0]} {_noun(owner)} needs it)" if _tag_values(owner) else ""
        return f"missing required key {loc[-1]!r}{what}; add {loc[-1]}: ...", loc
    if kind == "too_short":
        n = ctx.get("min_length", 1)
        return f"must have at least {n} item{'s' if n != 1 else ''}, got {_show(value)}", loc
    if kind in _BOUNDS:
        bound = next(iter(ctx.values()))
        fraction = kind.startswith("less_than") and bound in (1, 1.0) and isinstance(value, int | float) and value > 1
        hint = f" (a fraction: {value / 100:g} means {value:g}%)" if fraction and value <= 100 else ""
        return f"must be {_BOUNDS[kind]} {bound}, got {_show(value)}{hint}", loc
    if kind in ("model_type", "model_attributes_type", "dict_type") and not isinstance(value, dict):
        keys = _keys(type_at(root, loc))
        what = f"a mapping of {', '.join(keys)}" if keys else "a mapping (key: value)"
        return f"must be {what}, got {_show(value)}", loc
    message = err["msg"].removeprefix("Value error, ")
    if isinstance(value, (dict, list)):
        return message, loc
    if kind == "value_error":
        return f"{message}; got {_show(value)}", loc
    return f"{message[:1].lower()}{message[1:]}, got {_show(value)}", loc


def explain(exc: ValidationError, source: Source, root: type[BaseModel]) -> str:
    """One line for the first problem, with a count of the others."""
    errors = exc.errors()
    err = _first(errors)
    cross = err.get("ctx", {}).get("error")
    if isinstance(cross, CrossCheckError):
        loc: tuple[Any, ...] = cross.loc
        message = cross.message
    else:
        message, loc = _message(err, root, tuple(err["loc"]))
    path = data_path(source.data, loc)
    others = len([e for e in errors if e is not err and not _other_branch(e)])  # not the shapes it never was
    more = f" (+{others} more problem{'s' if others > 1 else ''})" if others else ""
    return f"{source.name} line {source.line_of(path)}: {format_path(path)}: {message}{more}"


def _known_prefix(root: type[BaseModel], path: Path) -> Path:
    """The longest start of path the schema knows (list indexes and the model's own keys): no key of the file's
    own invention."""
    for end in range(len(path) + 1):
        if end < len(path) and not isinstance(path[end], int) and type_at(root, path[: end + 1]) is None:
            return path[:end]
    return path


def explain_without_values(exc: ValidationError, source: Source, root: type[BaseModel]) -> str:
    """As explain, but for a file that may hold anything (a session file a config points at): the line and the
    key path as far as the schema knows it, what kind of problem, and never a byte of the file."""
    errors = exc.errors()
    err = _first(errors)
    path = data_path(source.data, tuple(err["loc"]))
    known = _known_prefix(root, path)
    kind = err["type"]
    if kind == "extra_forbidden":  # the key is the file's: only the schema's nearest one is named
        keys = _keys(type_at(root, known))
        message = f"an unknown key{_suggest(err['loc'][-1], keys)}; valid keys: {', '.join(keys)}"
    elif kind == "missing":  # the key is the schema's
        message = _message(err, root, tuple(err["loc"]))[0]
        known = path
    elif kind in ("value_error", "assertion_error", "union_tag_invalid"):  # their words may quote the value
        message = "a value that is not valid here (the file's contents are not shown)"
    else:  # pydantic's own words: what was expected (a type, the schema's choices), never the value
        message = err["msg"][:1].lower() + err["msg"][1:]
    more = f" (+{len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return f"{source.name} line {source.line_of(path)}: {format_path(known)}: {message}{more}"
