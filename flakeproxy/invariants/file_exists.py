from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class FileExists(Invariant):
    """A file exists under run.workspace."""

    type: Literal["file_exists"]
    path: str = Field(min_length=1)
