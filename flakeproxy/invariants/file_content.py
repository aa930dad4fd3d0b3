from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from flakeproxy.config.base import Regex
from flakeproxy.invariants.base import Invariant


class FileContent(Invariant):
    """A file under run.workspace contains / does not contain a substring, or matches a regex (all must hold)."""

    type: Literal["file_content"]
    path: str = Field(min_length=1)
    contains: str | None = None
    not_contains: str | None = None
    pattern: Regex | None = None

    @model_validator(mode="after")
    def _one_condition(self) -> FileContent:
        if self.contains is None and self.not_contains is None and self.pattern is None:
            raise ValueError("file_content needs contains, not_contains or pattern (any combination)")
        return self
