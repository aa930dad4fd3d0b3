"""Ports: everything that keeps a record of an episode (the proxy, an in-process agent's wrapped tools, the mock
services) behind one small protocol, so the episode runner loops over the ports it was given instead of knowing
each producer.

A port is told when an episode begins (its id, label, scenario, seed, trace, slot) and, when it ends, gives back
its journal entries for that episode. The first port to begin may name the episode (the proxy assigns its id);
the later ones use that name.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from flakeproxy import control_api as api
from flakeproxy.config import Scenario
from flakeproxy.config.settings import HttpMockService
from flakeproxy.runner.control import ControlClient, opening_body
from flakeproxy.runner.mock_client import mock_call, mock_scrub
from flakeproxy.wire.trace import TraceContext

if TYPE_CHECKING:
    from flakeproxy.runner.mock import MockService


@dataclass(frozen=True)
class Opening:
    """An episode about to run: the name its records carry (the proxy's episode id once it gave one), its label
    (which seeds fault decisions), its scenario (None: calm) as an object and as the proxy is told it (whole, or
    its name to the run's own proxy: EpisodeRunner._scenario_ref)."""

    id: str
    label: str
    scenario: Scenario | None
    scenario_ref: str | dict[str, Any] | None
    seed: int
    trace: TraceContext
    slot: int | None = None


@dataclass
class Records:
    """What a port kept of one episode, redacted by the port where it made them: journal entries, the seqs of
    exchanges still open when it ended, the texts it was handed with the secrets it saw scrubbed (None: left as they
    were), and those secret values, for the runner to scrub from the agent's spans.

    `secrets` lives in memory only: Records is never serialised, and the field is left out of its repr (and of its
    comparisons) so that no log or assertion message prints it. The proxy keeps its own (it scrubs the spans itself
    when the runner fetches them), and a mock service running in another process keeps its own too."""

    journal: list[dict[str, Any]] = field(default_factory=list)
    unsettled: list[int] = field(default_factory=list)
    texts: list[str | None] | None = None
    secrets: frozenset[str] = field(default=frozenset(), repr=False, compare=False)


class EpisodePort(Protocol):
    async def begin(self, opening: Opening) -> str | None:
        """Start keeping records of this episode; a new id for it, or None to keep opening.id."""

    async def turn(self, episode: str, turn: int) -> None:
        """A conversation's turn `turn` (1 = the first) starts now in this episode; its records carry it."""

    async def end(self, episode: str, texts: list[str | None]) -> Records:
        """The episode's records (texts: the agent's answer and error, for a port that scrubs secrets)."""


class ProxyPort:
    """The proxy, through its control API: opens the episode there (which names it) and reads its journal. With
    idle_ms each episode is opened with that lease: the proxy ends it by itself if this runner goes silent."""

    def __init__(self, control: ControlClient, idle_ms: int | None = None) -> None:
        self.control, self.idle_ms = control, idle_ms

    async def begin(self, opening: Opening) -> str | None:
        return await self.control.begin(self._body(opening))

    def _body(self, opening: Opening) -> api.EpisodeBegin:
        o = opening
        return opening_body(o.label, o.scenario_ref, o.seed, o.trace.trace_id, o.slot, self.idle_ms)

    async def end_then_begin(
        self, episode: str, texts: list[str | None], following: Opening
    ) -> tuple[Records, str | None]:
        """end() and the next episode's begin() in one call to the proxy (episodes one at a time): its records,
        and the id the next one opened as (None: it could not open; its own begin() will say why)."""
        journal, unsettled, scrubbed, named = await self.control.end_then_begin(episode, texts, self._body(following))
        return Records(journal, unsettled, scrubbed), named

    async def turn(self, episode: str, turn: int) -> None:
        await self.control.turn(episode, turn)

    async def end(self, episode: str, texts: list[str | None]) -> Records:
        journal, unsettled, scrubbed = await self.control.end(episode, texts)
        return Records(journal, unsettled, scrubbed)


class MockPort:
    """An HTTP mock service that records requests: cleared before each episode when episodes run one at a time,
    read after it (only the requests named for this episode when they overlap). In a conversation each request
    is marked with the turn that was running when it arrived. The mock redacted its recordings as it made them;
    at the end it scrubs the texts of the secrets it saw. Those secrets reach the agent's spans only when the mock
    runs in this process (`local`, a local run): one started elsewhere (`flakeproxy mock`) never sends them out."""

    def __init__(self, service: HttpMockService, sequential: bool, local: MockService | None = None) -> None:
        self.service, self.sequential, self.local = service, sequential, local
        self.turn_starts: dict[str, list[float]] = {}  # episode -> when each of its turns began (time.time())

    async def begin(self, opening: Opening) -> str | None:
        if self.sequential:
            await mock_call(self.service, "reset")
        return None

    async def turn(self, episode: str, turn: int) -> None:
        self.turn_starts.setdefault(episode, []).append(time.time())

    async def end(self, episode: str, texts: list[str | None]) -> Records:
        recorded = await mock_call(self.service, "requests")
        mine = recorded if self.sequential else [r for r in recorded if r.get("episode") == episode]
        starts = self.turn_starts.pop(episode, None)
        if starts:  # the turn running when each request arrived
            mine = [{**r, "turn": max(1, bisect.bisect_right(starts, float(r.get("started_at") or 0)))} for r in mine]
        whose = None if self.sequential else episode  # one at a time, all it recorded since its reset is this one's
        scrubbed = await mock_scrub(self.service, whose, texts)
        return Records(mine, texts=scrubbed, secrets=self.local.secrets_of(whose) if self.local else frozenset())
