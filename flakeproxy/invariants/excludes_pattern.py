from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.config.base import Regex
from flakeproxy.invariants.base import Invariant


class ExcludesPattern(Invariant):
    """None of patterns (regexes, case-insensitive) occurs in the answer."""

    type: Literal["excludes_pattern"]
    patterns: list[Regex] = Field(min_length=1)
