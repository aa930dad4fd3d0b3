"""Episode leases: an episode opened with `idle_ms` is ended by the proxy itself once no control call on it (begin,
turn, replay, end) came for that long. A runner ends its episodes however it stops, except when it is killed
(SIGKILL, OOM): then nothing else would, and a sidecar would go on putting every request into the dead run's
episode, faults and all. The runner asks for its agent's timeout plus a margin, so a live run never loses one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

#: The expired episodes remembered (their 404 says why), the oldest forgotten first.
REMEMBERED = 1024


@dataclass
class Lease:
    idle_ms: int
    touched: float  # time.monotonic() of the last control call on the episode


class Leases:
    """The leases of open episodes; `expire(episode id, idle_ms)` ends one whose lease ran out."""

    def __init__(self, expire: Callable[[str, int], Awaitable[None]]) -> None:
        self.expire = expire
        self.leases: dict[str, Lease] = {}
        self.expired: dict[str, int] = {}  # episode id -> the idle_ms it expired after
        self.tasks: set[asyncio.Task[None]] = set()

    def opened(self, episode: str, idle_ms: int | None) -> None:
        """An episode was opened (by an id that may have expired before): leased when idle_ms is given."""
        self.expired.pop(episode, None)
        if idle_ms is None:
            return
        self.leases[episode] = Lease(idle_ms, time.monotonic())
        task = asyncio.get_running_loop().create_task(self._watch(episode))
        self.tasks.add(task)  # kept, or the loop may collect it
        task.add_done_callback(self.tasks.discard)

    def touch(self, episode: str) -> None:
        if (lease := self.leases.get(episode)) is not None:
            lease.touched = time.monotonic()

    def drop(self, episode: str) -> None:
        """The episode ended (or the proxy was reset): no lease to watch."""
        self.leases.pop(episode, None)

    def why_gone(self, episode: str) -> str | None:
        """Why an episode that is not open any more was ended by the proxy (None: it was not)."""
        idle_ms = self.expired.get(episode)
        if idle_ms is None:
            return None
        return (
            f"episode {episode!r} was ended by the proxy: no control call on it came for {idle_ms} ms (its idle_ms); "
            f"its journal: GET /journal?episode={episode}"
        )

    def clear(self) -> None:
        self.leases.clear()
        self.expired.clear()

    def cancel(self) -> None:
        for task in list(self.tasks):
            task.cancel()

    async def _watch(self, episode: str) -> None:
        while (lease := self.leases.get(episode)) is not None:
            left_s = lease.touched + lease.idle_ms / 1000 - time.monotonic()
            if left_s > 0:
                await asyncio.sleep(left_s)
                continue
            self.leases.pop(episode)
            self.expired[episode] = lease.idle_ms
            while len(self.expired) > REMEMBERED:
                self.expired.pop(next(iter(self.expired)))
            await self.expire(episode, lease.idle_ms)
