from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class ContainsAny(Invariant):
    """The answer contains at least one of values (case-insensitive)."""

    type: Literal["contains_any"]
    values: list[str] = Field(min_length=1)
