"""Gemini's answers as its API sends them (generateContent JSON, streamGenerateContent?alt=sse events: the last
one carries finishReason, there is no [DONE]; every chunk carries usageMetadata, the last one the final count),
for the fidelity upstream."""

from __future__ import annotations

import json
from typing import Any

from tests.support.fake_usage import gemini_usage
from tests.support.upstream import ANSWER

MODEL = "gemini-2.0-flash"


def sse(data: Any) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


def _chunk(body: dict[str, Any], text: str, finish: str | None = None, words: int = 0) -> dict[str, Any]:
    """A chunk; the one that finishes counts `words` candidate tokens (a word a token)."""
    candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    usage = gemini_usage(body, words if finish else None)
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": MODEL}


def _words() -> list[str]:
    parts = ANSWER.split(" ")
    return [p if i == 0 else " " + p for i, p in enumerate(parts)]


def gemini_json(words: int | None = None, body: dict[str, Any] | None = None) -> dict[str, Any]:
    body = body or {}
    if words is None:
        return _chunk(body, ANSWER, "STOP", len(_words()))
    return _chunk(body, "".join(_words()[:words]), "MAX_TOKENS", words)


def gemini_events(words: int | None = None, body: dict[str, Any] | None = None) -> list[bytes]:
    body, pieces = body or {}, _words()
    if words is not None:
        return [sse(_chunk(body, p)) for p in pieces[:words]] + [sse(_chunk(body, "", "MAX_TOKENS", words))]
    return [sse(_chunk(body, p)) for p in pieces[:-1]] + [sse(_chunk(body, pieces[-1], "STOP", len(pieces)))]
