"""Similarity of two texts, offline and lexical: flakeproxy ships no embedding model, so this is always the
method. The score is the cosine of term vectors over words and over character trigrams, averaged: robust to
word order and small rewordings, blind to synonyms. Because a lexical score barely moves when one figure or
one "not" changes, texts whose numbers differ or whose negation polarity differs are a mismatch: their score
is halved, so it stays below 0.5 ("$189.84" vs "$981.48", "approved" vs "not approved")."""

from __future__ import annotations

import math
import re
from collections import Counter

_WORD = re.compile(r"[a-z0-9$%.,]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATION = re.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|without)\b|n't\b")
METHOD = "lexical (word and character-trigram cosine; differing numbers or negations halve it)"
MISMATCH_FACTOR = 0.5


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    if not a or not b:
        return 1.0 if a == b else 0.0
    dot = sum(a[k] * b[k] for k in a.keys() & b.keys())
    return dot / (math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values())))


def numbers(text: str) -> set[str]:
    """The numbers in text, normalized: thousands commas dropped, trailing zeros of decimals dropped."""
    out = set()
    for m in _NUMBER.finditer(text):
        raw = m.group()
        value = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw) else raw.replace(",", ".")
        if "." in value:
            value = value.rstrip("0").rstrip(".") or "0"
        out.add(value.lstrip("0") or "0")
    return out


def negated(text: str) -> bool:
    """The polarity of text: an odd number of negations."""
    return len(_NEGATION.findall(text)) % 2 == 1


def mismatch(a: str, b: str) -> bool:
    """Whether the texts state different figures or opposite polarity."""
    return numbers(a) != numbers(b) or negated(a) != negated(b)


def similarity(a: str, b: str) -> float:
    """A score in [0, 1]; 1 for identical texts, below 0.5 when numbers or negations differ."""
    a, b = a.lower().strip(), b.lower().strip()
    if a == b:
        return 1.0
    words = _cosine(Counter(_WORD.findall(a)), Counter(_WORD.findall(b)))
    grams = _cosine(Counter(a[i : i + 3] for i in range(len(a) - 2)), Counter(b[i : i + 3] for i in range(len(b) - 2)))
    score = (words + grams) / 2
    return round(score * MISMATCH_FACTOR if mismatch(a, b) else score, 4)
