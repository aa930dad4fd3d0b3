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
        """The part of text that fits; leading whitespace is free while words are left. The whitespace after
        the last word that fits is not kept (a real cut ends at a token, and tokens start with their space),
        so a streamed answer cut this way ends exactly as the same answer cut whole."""
        if self.left <= 0:
            return ""
        out, pos = [], 0
        lead = len(text) - len(text.lstrip())
        out.append(text[:lead])
        pos = lead
        for m in _WORD.finditer(text, pos):
            if self.left <= 0:
                break
            self.left -= 1
            out.append(m.group(0).rstrip() if self.left <= 0 else m.group(0))
        return "".join(out)


def cut_words(text: str, limit: int) -> str:
    """The first limit words of text, ending at the last one (as WordBudget.take ends a stream)."""
    return WordBudget(limit).take(text) if limit else ""


_CASUAL = {"cannot": "can't", "do not": "don't", "I am": "I'm", "will not": "won't", "Hello": "Hey"}
TONE_OPENER = "lol "
_FIELD = re.compile(r'"([^"\\]+)"(\s*):')


def _casual(text: str) -> str:
    for a, b in _CASUAL.items():
        text = text.replace(a, b)
    return text


def _refusal_rephrase(text: str) -> str:
    text = re.sub(r"(?i)\bI (?:cannot|can't|won't|will not)\b", "I'd rather not", text)
    return re.sub(r"(?i)\bI'm sorry\b", "Unfortunately", text)


def _bullets(text: str) -> str:
    return text.replace(". ", ".\n- ")


def _format_change(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return "- " + _bullets(text)
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


def compress_words(count: int, factor: float) -> int:
    """How many of count words verbosity_shift compress keeps: count / factor, at least 1, at least one fewer."""
    return max(1, min(count - 1, int(count / factor))) if count > 1 else count


def drift(drift_type: str, direction: str, factor: float) -> Callable[[str], str]:
    """The text transform of a response_drift fault, for a whole answer (a buffered JSON body)."""
    if drift_type == "verbosity_shift":
        if direction == "expand":
            return lambda t: " ".join([t] * max(2, round(factor)))
        return lambda t: cut_words(t, compress_words(len(t.split()), factor))
    return {
        "tone_shift": lambda t: TONE_OPENER + _casual(t),
        "refusal_rephrase": _refusal_rephrase,
        "format_change": _format_change,
        "json_field_rename": _json_field_rename,
    }[drift_type]


class StreamDrift:
    """The same drift for a streamed answer, applied once to the whole answer as its deltas pass: an opener
    goes on the first delta only, compress keeps budget_words words and drops the rest, expand repeats each
    finished sentence. Phrases split across two deltas are left alone. An event that repeats the full text
    (OpenAI Responses' output_text.done) gets what the deltas became (wire.providers.StreamText)."""

    def __init__(self, drift_type: str, direction: str, factor: float, budget_words: int) -> None:
        self.drift_type, self.direction, self.copies = drift_type, direction, max(2, round(factor))
        self.budget = WordBudget(budget_words)
        self.started = False
        self.sentence = ""  # expand: the sentence in progress

    def __call__(self, text: str) -> str:
        first, self.started = not self.started, True
        return self._piece(text, first)

    def _piece(self, text: str, first: bool) -> str:
        kind = self.drift_type
        if kind == "tone_shift":
            return (TONE_OPENER if first else "") + _casual(text)
        if kind == "refusal_rephrase":
            return _refusal_rephrase(text)
        if kind == "format_change":
            return ("- " if first else "") + _bullets(text)
        if kind == "json_field_rename":
            return _FIELD.sub(lambda m: f'"{m.group(1)}_v2"{m.group(2)}:', text)
        if self.direction == "compress":
            return self.budget.take(text)
        return self._expand(text)

    def _expand(self, text: str) -> str:
        out = []
        for part in re.split(r"(?<=[.!?])(?=\s|$)", text):
            out.append(part)
            self.sentence += part
            if re.search(r"[.!?]$", part):
                out.append(" " + " ".join([self.sentence.strip()] * (self.copies - 1)))
                self.sentence = ""
        return "".join(out)


def corrupt_arguments(corruption: str, arguments: str) -> str:
    """Break a tool call's JSON arguments string."""
    if corruption == "invalid_json":
        return "{'" + arguments.strip("{}") + ",,}"
    return arguments[: max(1, len(arguments) // 2)]  # truncate_json (wrong_name leaves the arguments alone)


class StreamedArgsCut:
    """truncate_json for a streamed tool call: the arguments arrive in pieces, and the call must end up with
    one prefix of them, as when a real answer is cut off. The first non-empty piece of each call keeps its
    first half (at least one character); every later piece of that call becomes empty. A new call starts when
    a piece comes with a name. `whole` answers an event that repeats the full arguments (OpenAI Responses'
    function_call_arguments.done) with what the pieces became."""

    def __init__(self) -> None:
        self.kept = ""
        self.cut = False

    def __call__(self, name: str, arguments: str) -> tuple[str, str]:
        if name:
            self.kept, self.cut = "", False
        if self.cut or not arguments:
            return name, ""
        self.cut = True
        self.kept = arguments[: max(1, len(arguments) // 2)]
        return name, self.kept

    def whole(self, arguments: str) -> str:
        return self.kept if self.cut else corrupt_arguments("truncate_json", arguments)
