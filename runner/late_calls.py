"""After an episode whose agent gave no reply (it timed out or hung up), wait for the agent to stop calling before
the episode closes.

Where the proxy ties a request to the one episode open (run.attribution none, or slots: one per slot), an agent
that timed out may still be working: its next LLM or tool call, seconds later, would land in the next episode and
get that episode's faults (a trial's pydantic-ai agent, its tool timeout past agent.timeout_ms: its late LLM call
took the next episode's 503, and that episode's call count FAILed on calls its agent never made). So the episode
stays open until none of its exchanges is open and none has begun for QUIET_S, at most its bound: the late calls
are then its own, judged with it (a lost episode's traffic checks cannot PASS), and one that goes on calling
past the bound is said. With header or trace attribution a late call names its own episode: no wait.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from flakeproxy.runner.control import ControlClient

QUIET_S = 1.0
POLL_S = 0.1
MIN_BOUND_S, MAX_BOUND_S = 5.0, 60.0


@dataclass(frozen=True)
class Settled:
    """How the wait ended: the seconds waited, the requests that began meanwhile, and whether the agent was still
    calling (an exchange open, or one begun within QUIET_S) when the bound ran out."""

    waited_s: float
    late: int
    still_calling: bool


def bound_s(timeout_ms: int) -> float:
    """As long again as the agent had for its answer, from 5 s to 60 s."""
    return min(max(timeout_ms / 1000, MIN_BOUND_S), MAX_BOUND_S)


async def settle(control: ControlClient, episode: str, bound: float) -> Settled:
    """Wait until the episode's journal has had no open exchange and no new request for QUIET_S, at most `bound`
    seconds."""
    start = time.monotonic()
    first = seen = await control.activity(episode)
    quiet_since = start
    while True:
        now = time.monotonic()
        if seen[1] == 0 and now - quiet_since >= QUIET_S:
            return Settled(now - start, seen[0] - first[0], False)
        if now - start >= bound:
            return Settled(now - start, seen[0] - first[0], True)
        await asyncio.sleep(POLL_S)
        now_seen = await control.activity(episode)
        if now_seen != seen:
            seen, quiet_since = now_seen, time.monotonic()
