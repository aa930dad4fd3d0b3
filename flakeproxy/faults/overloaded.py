from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class OverloadedFault(Fault):
    """Answer as an overloaded provider: 529 overloaded_error (Anthropic) or 503 (OpenAI)."""

    mode: Literal["overloaded"]
    retry_after_s: int | None = Field(None, ge=0, description="None = no Retry-After header.")
