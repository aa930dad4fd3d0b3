"""What every adapter returns, and the interface the engine drives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Reply:
    """One invocation: the answer, or the reason there is none (an agent error, not an invariant failure)."""

    text: str | None
    latency_ms: float
    error: str | None = None


class Agent(Protocol):
    @property
    def has_reset(self) -> bool: ...

    async def start(self) -> None: ...

    async def invoke(self, prompt: str, cell: str | None = None) -> Reply: ...

    async def reset(self) -> None: ...

    async def close(self) -> None: ...


def clip(text: str, n: int = 300) -> str:
    text = text.strip()
    return text if len(text) <= n else text[:n] + "..."
