from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class FileAbsent(Invariant):
    """A file does not exist under run.workspace."""

    type: Literal["file_absent"]
    path: str = Field(min_length=1)
