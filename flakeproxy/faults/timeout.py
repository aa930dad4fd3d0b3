from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class TimeoutFault(Fault):
    """Hang for delay_ms without reaching the upstream, then close the connection or answer 504."""

    mode: Literal["timeout"]
    delay_ms: int = Field(30000, ge=0)
    end: Literal["close", "gateway_timeout"] = "close"
