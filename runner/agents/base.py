"""What every adapter returns, and the interface the engine drives."""

from __future__ import annotations

import re
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
    """Text for a one-line reason: whitespace (newlines too) collapsed, at most n characters."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n] + "..."


def telling_line(text: str) -> str:
    """The line of a program's error output that says what went wrong: the last one naming an error or
    exception (a Python traceback's last line, a Node stack's 'Error: ...'), else the last non-empty one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    named = [line for line in lines if re.match(r"([\w.]*(Error|Exception)\b|error\b|panic\b).*:", line)]
    return (named or lines or [""])[-1]
