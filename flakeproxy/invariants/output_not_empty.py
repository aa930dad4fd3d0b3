from __future__ import annotations

from typing import Literal

from flakeproxy.invariants.base import Invariant


class OutputNotEmpty(Invariant):
    """The answer has at least one non-blank character."""

    type: Literal["output_not_empty"]
