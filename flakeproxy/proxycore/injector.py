"""Decide, per request, which fault of the active scenario fires: counters per episode, seeded randomness."""

from __future__ import annotations

import fnmatch
import hashlib
import itertools
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flakeproxy.config.scenario import Scenario
from flakeproxy.faults import LLM_ATTACKS, WS_FAULTS, Fault
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call, TargetSpec, is_ws_upgrade

SHARED = "_"  # counter key for requests that belong to no single episode
ENDED_TRACES = 4096  # the trace ids of the last episodes ended, to know their late requests
#: What an episode id may be: it goes into URLs (POST /episodes/{id}/end) and headers as it is.
EPISODE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def fault_seed(seed: int, scenario: str, section: str, index: int, call_index: int, episode: str = "") -> int:
    """The seed of one decision: the same run seed gives the same faults, call for call.

    `episode` is the episode's label (stable across runs, e.g. "invariant x scenario"), so that episodes draw
    different faults from one another while each replays exactly.
    """
    digest = hashlib.sha256(f"{seed}|{scenario}|{section}|{index}|{call_index}|{episode}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class Decision:
    scenario: str
    section: str
    index: int
    kind: str
    call_index: int
    seed: int
    action: Action
    turn: int | None = None  # the conversation turn it fired on (None: a one-turn prompt)

    def record(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "section": self.section,
            "index": self.index,
            "kind": self.kind,
            "call_index": self.call_index,
            "seed": self.seed,
        } | ({"turn": self.turn} if self.turn is not None else {})


#: An episode opened without a scenario of its own follows the proxy's active one (PUT /scenario).
FOLLOW = "follow"


@dataclass
class Episode:
    """One episode's slice of the proxy: its own scenario and seed (or FOLLOW), how its requests are recognised
    (trace id, slot), and its fault counters (after_calls, times), never shared with another episode."""

    id: str
    label: str | None = None
    scenario: Scenario | str | None = FOLLOW
    seed: int = 0
    trace_id: str | None = None
    slot: int | None = None
    seen: dict[tuple[str, int], int] = field(default_factory=dict)
    fired: dict[tuple[str, int], int] = field(default_factory=dict)
    #: the conversation's turn now running (POST /episodes/{id}/turn); None: never told (a one-turn prompt)
    turn: int | None = None

    @property
    def follows(self) -> bool:
        return isinstance(self.scenario, str)

    @property
    def own(self) -> Scenario | None:
        """Its own scenario (None: calm, or it follows the active one)."""
        return None if isinstance(self.scenario, str) else self.scenario


@dataclass(frozen=True)
class Clues:
    """What a request carries that can tie it to an episode: its header, W3C trace context, its listener's slot."""

    header: str | None = None
    trace_id: str | None = None
    baggage_episode: str | None = None
    slot: int | None = None


class Injector:
    """The state the proxy keeps between requests: the active scenario, open episodes (each with its own scenario
    or following the active one), counters."""

    def __init__(self, targets: Mapping[str, TargetSpec]) -> None:
        self.targets = dict(targets)
        self.scenario: Scenario | None = None
        self.seed = 0
        self.episodes: dict[str, Episode] = {}
        self._shared = Episode(SHARED)
        self._ids = itertools.count(1)
        self._ended_traces: dict[str, str] = {}  # trace id -> the episode that ended with it

    def set_scenario(self, scenario: Scenario | None, seed: int) -> None:
        self.scenario, self.seed = scenario, seed
        self._shared = Episode(SHARED)
        for episode in self.episodes.values():
            if episode.follows:
                episode.seen.clear()
                episode.fired.clear()

    def reset(self) -> None:
        self.set_scenario(None, 0)
        self.episodes.clear()
        self._ended_traces.clear()

    def begin_episode(
        self,
        label: str | None = None,
        episode_id: str | None = None,
        *,
        scenario: Scenario | str | None = FOLLOW,
        seed: int = 0,
        trace_id: str | None = None,
        slot: int | None = None,
    ) -> Episode:
        """Open an episode; `scenario` (None: calm) makes it independent of the active scenario. The caller checks
        that its id, trace id and slot are free (busy())."""
        episode = Episode(episode_id or f"c{next(self._ids)}", label, scenario, seed, trace_id, slot)
        self.episodes[episode.id] = episode
        return episode

    def busy(self, episode_id: str | None, trace_id: str | None, slot: int | None) -> str | None:
        """Why an episode with these could not be opened now (each may belong to one open episode), or None."""
        for episode in self.episodes.values():
            if episode_id is not None and episode.id == episode_id:
                return f"episode {episode_id!r} is already open; end it first or pick another id"
            if trace_id is not None and episode.trace_id == trace_id:
                return f"trace id {trace_id} belongs to open episode {episode.id!r}; give each episode its own trace"
            if slot is not None and episode.slot == slot:
                return f"slot {slot} is busy with episode {episode.id!r}; a slot runs one episode at a time"
        return None

    def set_turn(self, episode_id: str, turn: int) -> Episode:
        """The turn of its conversation an open episode runs now: its requests carry it, `turns:` faults read it
        (the counters go on across turns). KeyError when the episode is not open."""
        episode = self.episodes[episode_id]
        episode.turn = turn
        return episode

    def turn_of(self, episode_id: str | None) -> int | None:
        """The turn an open episode runs now (None: not open, or never told a turn)."""
        episode = self.episodes.get(episode_id or "")
        return episode.turn if episode is not None else None

    def end_episode(self, episode_id: str) -> Episode:
        episode = self.episodes.pop(episode_id)
        if episode.trace_id is not None:  # its late requests, by their trace, are still its own, not the open one's
            self._ended_traces[episode.trace_id] = episode.id
            while len(self._ended_traces) > ENDED_TRACES:
                del self._ended_traces[next(iter(self._ended_traces))]
        return episode

    def named_gone(self, clues: Clues) -> str | None:
        """The episode a request names that is not open (by header or baggage: any name; by trace id: an episode
        that ended here), or None: such a request belongs to no open episode."""
        for named in (clues.header, clues.baggage_episode):
            if named and named not in self.episodes:
                return named
        if clues.trace_id is not None and not any(e.trace_id == clues.trace_id for e in self.episodes.values()):
            return self._ended_traces.get(clues.trace_id)
        return None

    def attribute(self, clues: Clues) -> tuple[str | None, list[str]]:
        """The episode a request belongs to, exactly: named by the episode header, by its baggage or trace id, by the
        slot its listener serves, or the only open episode; else None and the candidates (never a guess). A request
        that names an episode not open (one that ended: a timed-out agent's retry) is none's: it was never the
        only open episode's, whose faults it got before (a trial's false FAIL)."""
        for named in (clues.header, clues.baggage_episode):
            if named and named in self.episodes:
                return named, []
        if self.named_gone(clues) is not None:
            return None, []
        if clues.trace_id is not None:
            for episode in self.episodes.values():
                if episode.trace_id == clues.trace_id:
                    return episode.id, []
        if clues.slot is not None:
            on_slot = [c.id for c in self.episodes.values() if c.slot == clues.slot]
            return (on_slot[0], []) if on_slot else (None, [])
        if len(self.episodes) == 1:
            return next(iter(self.episodes)), []
        return None, sorted(self.episodes)

    def scenario_of(self, episode_id: str | None) -> tuple[Scenario | None, int]:
        """The scenario and seed that decide a request of this episode (None: the shared, active one)."""
        episode = self.episodes.get(episode_id or "")
        if episode is None or episode.follows:
            return self.scenario, self.seed
        return episode.own, episode.seed

    def _matches(self, fault: Fault, llm_side: bool, call: Call) -> bool:
        if isinstance(fault, WS_FAULTS) and not is_ws_upgrade(call):
            return False  # a WebSocket fault fires on (and counts) WebSocket connections only
        if fault.match_url and not fnmatch.fnmatchcase(call.url, fault.match_url):
            return False
        names = [t for t in call.targets if bool(self.targets[t].api) == llm_side]
        if fault.tool:
            return any(fnmatch.fnmatchcase(n, fault.tool) for n in names)
        return bool(fault.match_url) or (llm_side and call.api is not None)

    @staticmethod
    def faults_of(s: Scenario | None) -> list[tuple[str, int, Fault, bool]]:
        """A scenario's faults in the order they decide: (section, index, fault, whether it is on the LLM side)."""
        if s is None:
            return []
        return (
            [("tool_faults", i, f, False) for i, f in enumerate(s.tool_faults)]
            + [("llm_faults", i, f, True) for i, f in enumerate(s.llm_faults)]
            + [("context_attacks", i, f, isinstance(f, LLM_ATTACKS)) for i, f in enumerate(s.context_attacks)]
        )

    def markers(self, call: Call, episode_id: str | None) -> dict[int, str]:
        """For a call to an LLM: the markers of its episode scenario's context attacks on tool answers (index in
        context_attacks -> marker), which the proxy looks for in the request to tell that an attack reached
        the model."""
        scenario, _ = self.scenario_of(episode_id)
        if scenario is None or call.api is None or not scenario.context_attacks:
            return {}
        return {i: m for i, f in enumerate(scenario.context_attacks) if (m := f.marker()) is not None}

    def may_fault(self, call: Call, episode_id: str | None = None) -> bool:
        """Whether a fault of the episode's scenario could match this call, judged before its body is read.

        A call on a listener with MCP tool targets always could: the tool is named in the body.
        """
        scenario, _ = self.scenario_of(episode_id)
        if scenario is None:
            return False
        if any(t.mcp_tool and t.listener == call.listener for t in self.targets.values()):
            return True
        return any(self._matches(fault, llm_side, call) for _, _, fault, llm_side in self.faults_of(scenario))

    def matching(self, scenario: Scenario, call: Call) -> list[tuple[str, int, Fault]]:
        """The faults of scenario that call matches (section, index, fault), in order: each counts it toward its
        after_calls and times."""
        return [
            (s, i, fault) for s, i, fault, llm_side in self.faults_of(scenario) if self._matches(fault, llm_side, call)
        ]

    def decide(self, call: Call, episode_id: str | None) -> Decision | None:
        """Count this call for every fault it matches; the first one that fires decides the action."""
        scenario, run_seed = self.scenario_of(episode_id)
        if scenario is None:
            return None
        episode = self.episodes.get(episode_id or "", self._shared)
        chosen: Decision | None = None
        for section, index, fault in self.matching(scenario, call):
            key = (section, index)
            n = episode.seen[key] = episode.seen.get(key, 0) + 1
            if chosen is not None or n < fault.after_calls:
                continue
            if fault.turns is not None and (episode.turn or 1) not in fault.turns:
                continue
            if fault.times is not None and episode.fired.get(key, 0) >= fault.times:
                continue
            seed = fault_seed(run_seed, scenario.name, section, index, n, episode.label or "")
            rng = random.Random(seed)
            if rng.random() >= fault.probability:
                continue
            episode.fired[key] = episode.fired.get(key, 0) + 1
            action = fault.act(call, rng)
            chosen = Decision(scenario.name, section, index, fault.kind, n, seed, action, episode.turn)
        return chosen
