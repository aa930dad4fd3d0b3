from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class Latency(Invariant):
    """The agent answered within max_ms."""

    type: Literal["latency"]
    max_ms: int = Field(gt=0)
