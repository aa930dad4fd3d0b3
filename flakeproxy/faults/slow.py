from __future__ import annotations

from typing import Literal

from flakeproxy.faults.base import Delay


class SlowFault(Delay):
    """Delay the call by delay_ms (+ jitter) and then forward it; on LLM streams this is time to first token."""

    mode: Literal["slow", "latency"]
