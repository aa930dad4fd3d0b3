from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class StreamCutFault(Fault):
    """End an LLM SSE stream cleanly after after_events events, with no [DONE] / message_stop (0 = none)."""

    mode: Literal["stream_cut"]
    after_events: int = Field(3, ge=0)
