from __future__ import annotations

from typing import Literal

from flakeproxy.invariants.base import Invariant


class Completes(Invariant):
    """The agent answered at all: no timeout, no transport error, no unparseable reply."""

    type: Literal["completes"]
