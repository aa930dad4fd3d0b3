from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class RateLimitFault(Fault):
    """Answer 429 with a Retry-After header of retry_after_s seconds (0 = retry at once)."""

    mode: Literal["rate_limit"]
    retry_after_s: int = Field(1, ge=0)
    message: str | None = None
