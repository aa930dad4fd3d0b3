from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class Similarity(Invariant):
    """The answer means what expected means (cosine of embeddings, or the lexical fallback)."""

    type: Literal["similarity"]
    expected: str = Field(min_length=1)
    threshold: float = Field(0.8, ge=0.0, le=1.0)
