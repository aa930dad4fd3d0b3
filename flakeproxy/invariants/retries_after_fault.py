from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class RetriesAfterFault(Invariant):
    """After an injected failure on target, the agent retried at most max times."""

    type: Literal["retries_after_fault"]
    target: str
    max: int = Field(ge=0)
