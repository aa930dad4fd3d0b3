"""Similarity of two texts, offline. The lexical fallback (always available) is the cosine of TF-IDF-free
term vectors over words and character trigrams, averaged: robust to word order and small rewordings,
blind to synonyms. flakeproxy ships no embedding model; this is the documented fallback."""

from __future__ import annotations

import math
import re
from collections import Counter

_WORD = re.compile(r"[a-z0-9$%.,]+")
METHOD = "lexical (word and character-trigram cosine)"


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    if not a or not b:
        return 1.0 if a == b else 0.0
    dot = sum(a[k] * b[k] for k in a.keys() & b.keys())
    return dot / (math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values())))


def similarity(a: str, b: str) -> float:
    """A score in [0, 1]; 1 for identical texts."""
    a, b = a.lower().strip(), b.lower().strip()
    if a == b:
        return 1.0
    words = _cosine(Counter(_WORD.findall(a)), Counter(_WORD.findall(b)))
    grams = _cosine(Counter(a[i : i + 3] for i in range(len(a) - 2)), Counter(b[i : i + 3] for i in range(len(b) - 2)))
    return round((words + grams) / 2, 4)
