from __future__ import annotations

from typing import Literal

from flakeproxy.faults.base import Fault


class ResetFault(Fault):
    """Close the client connection without any response; the upstream is not called."""

    mode: Literal["reset"]
