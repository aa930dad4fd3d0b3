from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class TruncatedResponseFault(Fault):
    """Cut the LLM's content to max_tokens words with finish_reason length / stop_reason max_tokens (0 = empty)."""

    mode: Literal["truncated_response"]
    max_tokens: int = Field(10, ge=0)
