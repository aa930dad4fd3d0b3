from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class MemoryPoisoningAttack(Fault):
    """Plant payload in the conversation the agent sends its LLM (as a prior message or in the last one)."""

    type: Literal["memory_poisoning"]
    payload: str = Field(min_length=1)
    strategy: Literal["prepend", "append", "replace", "history"] = "history"
