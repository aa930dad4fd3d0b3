"""Reads pydantic models for the reference pages: a field's type, default and description as one table row.

Kept apart from the pages so that every page that shows a model (config keys, faults, invariants) writes its
fields the same way.
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined


def cell(text: str) -> str:
    """Text made safe for one Markdown table cell (pipes escaped, one line)."""
    return " ".join(text.split()).replace("|", "\\|")


def type_name(annotation: Any) -> str:
    """A short, readable type: `str | None`, `list[Scenario]`, `'error' | 'rate_limit'`."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_name(args[0])
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(type_name(a) for a in args)}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation).replace("typing.", ""))


def default_text(field: FieldInfo) -> str:
    """The field's default as a reader would write it; `required` when it has none."""
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
        if isinstance(value, BaseModel):
            return "(its own defaults)"
        return f"`{value!r}`"
    if field.default is PydanticUndefined:
        return "required"
    return f"`{field.default!r}`"


def doc_line(obj: Any) -> str:
    """The first paragraph of an object's docstring, on one line ('' when it has none)."""
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def doc_text(obj: Any) -> str:
    """The whole docstring, its paragraphs kept apart and each on one line (Markdown reflows them anyway)."""
    doc = inspect.getdoc(obj) or ""
    return "\n\n".join(" ".join(part.split()) for part in doc.split("\n\n"))


def field_rows(model: type[BaseModel], skip: set[str] | None = None) -> list[tuple[str, str, str, str]]:
    """(name, type, default, description) per field of model, in declaration order, minus skip."""
    rows = []
    for name, field in model.model_fields.items():
        if skip and name in skip:
            continue
        key = field.alias or name
        rows.append((key, type_name(field.annotation), default_text(field), field.description or ""))
    return rows


def table(rows: list[tuple[str, str, str, str]], first: str = "field") -> list[str]:
    """The rows as a Markdown table with `first` as the name column's heading."""
    lines = [f"| {first} | type | default | description |", "|---|---|---|---|"]
    lines += [f"| `{n}` | {cell(t)} | {cell(d)} | {cell(s)} |" for n, t, d, s in rows]
    return lines


def models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds directly (X, X | None, list[X], dict[str, X], unions of them)."""
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found += [m for m in models_in(arg) if m not in found]
    return found


def path_step(annotation: Any) -> str:
    """How a key path goes into a field's value: `[]` for a list, `.NAME` for a mapping, `` otherwise."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated or origin in (typing.Union, types.UnionType):
        steps = [path_step(a) for a in typing.get_args(annotation) if a is not type(None)]
        return next((s for s in steps if s), "")
    if origin is list:
        return "[]"
    if origin is dict:
        return ".NAME"
    return ""
