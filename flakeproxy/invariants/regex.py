from __future__ import annotations

from typing import Literal

from flakeproxy.config.base import Regex as Pattern
from flakeproxy.invariants.base import Invariant


class Regex(Invariant):
    """The answer matches pattern (Python regex, searched anywhere; use (?i) for case-insensitive)."""

    type: Literal["regex"]
    pattern: Pattern
