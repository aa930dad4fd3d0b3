from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class Custom(Invariant):
    """A script reads the cell context JSON on stdin and prints {passed, score, reason, details}."""

    type: Literal["custom"]
    script: str = Field(min_length=1)
    runs_in: Literal["host", "sandbox"] = "host"
    timeout_ms: int = Field(60000, gt=0)
