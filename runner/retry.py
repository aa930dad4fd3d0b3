"""An async step tried again, with exponential back-off, while it fails in one way: the runner's two waits (for
the proxy's control API to answer, for an agent's reset endpoint to accept). A dozen lines of our own instead of
tenacity, whose import pulled in tornado (installed with mitmproxy) and with it colorama, curses and ctypes: ~17 ms
of every run's start-up, when the runner's start is the longer of the two beside the proxy's (issue 23)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def retrying(
    step: Callable[[], Awaitable[T]],
    retry_on: type[BaseException] | tuple[type[BaseException], ...],
    *,
    first_s: float,
    max_s: float,
    attempts: int | None = None,
    within_s: float | None = None,
    before_sleep: Callable[[float, BaseException], None] | None = None,
) -> T:
    """step's result, trying it again after first_s, 2 x first_s, ... (at most max_s between tries) while it raises
    `retry_on`; the last such error is raised once `attempts` tries were made or `within_s` seconds have gone by
    since the first began. before_sleep is told (seconds since the first try began, the error) before each wait.
    Anything else step raises is raised at once."""
    began, tried = time.monotonic(), 0
    while True:
        tried += 1
        try:
            return await step()
        except retry_on as e:
            elapsed = time.monotonic() - began
            if (attempts is not None and tried >= attempts) or (within_s is not None and elapsed >= within_s):
                raise
            if before_sleep is not None:
                before_sleep(elapsed, e)
            await asyncio.sleep(min(first_s * 2 ** (tried - 1), max_s))
