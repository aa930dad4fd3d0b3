"""Text surgery for LLM answers: cut to N words, garbage, drift, broken tool arguments."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

_WORD = re.compile(r"\S+\s*")


class WordBudget:
    """Lets through at most `limit` words across successive pieces of text (tokens ~ words)."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def take(self, text: str) -> str:
        """The part of text that fits; leading whitespace is free."""
        out, pos = [], 0
        lead = len(text) - len(text.lstrip())
        out.append(text[:lead])
        pos = lead
        for m in _WORD.finditer(text, pos):
            if self.left <= 0:
                break
            out.append(m.group(0))
            self.left -= 1
        return "".join(out)


def cut_words(text: str, limit: int) -> str:
    return WordBudget(limit).take(text).rstrip()


def _tone_shift(text: str) -> str:
    pairs = {"cannot": "can't", "do not": "don't", "I am": "I'm", "will not": "won't", "Hello": "Hey"}
    for a, b in pairs.items():
        text = text.replace(a, b)
    return text + " lol"


def _refusal_rephrase(text: str) -> str:
    text = re.sub(r"(?i)\bI (?:cannot|can't|won't|will not)\b", "I'd rather not", text)
    return re.sub(r"(?i)\bI'm sorry\b", "Unfortunately", text)


def _format_change(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return "- " + text.replace(". ", ".\n- ")
    if isinstance(data, dict):
        return "\n".join(f"{k}: {v}" for k, v in data.items())
    return str(data)


def _json_field_rename(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if isinstance(data, dict):
        return json.dumps({f"{k}_v2": v for k, v in data.items()})
    return text


def drift(drift_type: str, direction: str, factor: float) -> Callable[[str], str]:
    """The text transform of a response_drift fault."""
    if drift_type == "verbosity_shift":
        if direction == "expand":
            return lambda t: " ".join([t] * max(2, round(factor)))
        return lambda t: cut_words(t, max(1, int(len(t.split()) / factor)))
    return {
        "tone_shift": _tone_shift,
        "refusal_rephrase": _refusal_rephrase,
        "format_change": _format_change,
        "json_field_rename": _json_field_rename,
    }[drift_type]


def corrupt_arguments(corruption: str, arguments: str) -> str:
    """Break a tool call's JSON arguments string."""
    if corruption == "invalid_json":
        return "{'" + arguments.strip("{}") + ",,}"
    return arguments[: max(1, len(arguments) // 2)]  # truncate_json (wrong_name leaves the arguments alone)
