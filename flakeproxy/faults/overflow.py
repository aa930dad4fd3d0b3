from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class OverflowAttack(Fault):
    """Pad a tool's answer to size_bytes with filler, to push the agent's context past its limits."""

    type: Literal["overflow"]
    size_bytes: int = Field(200_000, ge=1)
    filler: str = Field("lorem ipsum ", min_length=1)
