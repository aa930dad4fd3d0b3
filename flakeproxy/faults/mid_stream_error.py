from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class MidStreamErrorFault(Fault):
    """Send a provider error event inside a 200 SSE stream after after_events events, then end it."""

    mode: Literal["mid_stream_error"]
    after_events: int = Field(3, ge=0)
    error_type: str = Field("overloaded_error", description="The error's type in the provider's JSON.")
    message: str = "Overloaded"
