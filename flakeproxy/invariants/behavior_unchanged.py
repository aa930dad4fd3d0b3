from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class BehaviorUnchanged(Invariant):
    """The answer under chaos stays similar to the baseline (auto: the same prompt with no chaos)."""

    type: Literal["behavior_unchanged"]
    baseline: str = Field("auto", min_length=1, description="'auto', or the expected answer itself.")
    similarity_threshold: float = Field(0.75, ge=0.0, le=1.0)
