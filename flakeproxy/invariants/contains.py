from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class Contains(Invariant):
    """The answer contains value (case-insensitive)."""

    type: Literal["contains"]
    value: str = Field(min_length=1)
