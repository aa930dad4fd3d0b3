from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class CommandExit(Invariant):
    """A shell command run in run.workspace returns exit_code."""

    type: Literal["command_exit"]
    command: str = Field(min_length=1)
    exit_code: int = 0
    timeout_ms: int = Field(60000, gt=0)
