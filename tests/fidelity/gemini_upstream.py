"""Gemini's answers as its API sends them (generateContent JSON, streamGenerateContent?alt=sse events: the last
one carries finishReason, there is no [DONE]), for the fidelity upstream."""

from __future__ import annotations

import json
from typing import Any

from tests.support.upstream import ANSWER

MODEL = "gemini-2.0-flash"
USAGE = {"promptTokenCount": 5, "candidatesTokenCount": 15, "totalTokenCount": 20}


def sse(data: Any) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


def _chunk(text: str, finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL}
    if finish:
        chunk["usageMetadata"] = USAGE
    return chunk


def _words() -> list[str]:
    parts = ANSWER.split(" ")
    return [p if i == 0 else " " + p for i, p in enumerate(parts)]


def gemini_json(words: int | None = None) -> dict[str, Any]:
    if words is None:
        return _chunk(ANSWER, "STOP")
    return _chunk("".join(_words()[:words]), "MAX_TOKENS")


def gemini_events(words: int | None = None) -> list[bytes]:
    pieces = _words()
    if words is not None:
        return [sse(_chunk(p)) for p in pieces[:words]] + [sse(_chunk("", "MAX_TOKENS"))]
    return [sse(_chunk(p)) for p in pieces[:-1]] + [sse(_chunk(pieces[-1], "STOP"))]
