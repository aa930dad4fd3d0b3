from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class TruncatedFault(Fault):
    """Forward the upstream's answer cut to keep_fraction of its body, Content-Length still the full size."""

    mode: Literal["truncated"]
    keep_fraction: float = Field(0.5, ge=0.0, lt=1.0)
