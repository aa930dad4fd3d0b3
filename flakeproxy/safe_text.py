"""Text that any file or terminal can hold: lone surrogates escaped, control characters shown, not obeyed.

An agent may answer anything: JSON's `"\\ud800"` parses to a lone surrogate, which no UTF-8 file, XML or
terminal can hold, and writing it raised half-way through a run. Here every string of a JSON-like tree, or of a
pydantic model, gets its lone surrogates written as the text `\\ud800`; text without one comes back as it was.
Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # not at run time: the CLI's entry point imports this module, and pydantic costs its start
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")
# C0 and C1 controls but newline and tab: ESC starts a terminal's escape sequences, BEL rings it.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """text with control characters (ESC, BEL, ...; not newline or tab) written as `\x1b`: shown, not obeyed by
    a terminal or a Markdown viewer."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


def escape_surrogates(text: str) -> str:
    """text with each lone surrogate as a visible escape (`\\udXXX`); text without one, unchanged."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def escaped_tree(data: Any) -> Any:
    """A JSON-like value (dicts, lists, strings, numbers) with every string, keys too, escaped."""
    if isinstance(data, str):
        return escape_surrogates(data)
    if isinstance(data, dict):
        return {escaped_tree(k): escaped_tree(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [escaped_tree(v) for v in data]
    return data


def utf8_json(data: Any, indent: int | None = None) -> bytes:
    """A JSON-like value as UTF-8 JSON, its strings' lone surrogates escaped: encoded at once, the tree walked only
    when the encoding says a string held one (a walk of a large run's results took longer than its encoding)."""
    try:
        return json.dumps(data, indent=indent, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(escaped_tree(data), indent=indent, ensure_ascii=False).encode("utf-8")


def escaped(model: M) -> M:
    """The model as it reads back from its JSON, surrogates escaped; the same object when it held none."""
    data = model.model_dump(mode="json")
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return type(model).model_validate(escaped_tree(data))
    return model
