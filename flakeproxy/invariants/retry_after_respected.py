from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class RetryAfterRespected(Invariant):
    """After a Retry-After answer from target, the agent waited at least that long before retrying."""

    type: Literal["retry_after_respected"]
    target: str
    tolerance_ms: int = Field(50, ge=0)
