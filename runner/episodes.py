"""Run: one episode = reset, open its journal slice in the proxy, invoke the agent once, close, capture.

Checks that read the workspace or a service (reads_state) are judged here, right after their episode and
before the next reset, because the state they read is gone afterwards.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from flakeproxy.config import FlakeproxyConfig, Scenario
from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.cells import Context, judge_episode, judges
from flakeproxy.proxycore.delivery import mark_delivery
from flakeproxy.proxycore.redact_values import REDACTED, scrub_nested, searchable
from flakeproxy.results import Episode
from flakeproxy.runner.agents.base import Agent, Invocation
from flakeproxy.runner.agents.python import import_object
from flakeproxy.runner.control import ControlClient
from flakeproxy.runner.conversation import converse, new_session
from flakeproxy.runner.late_calls import Settled, bound_s, settle
from flakeproxy.runner.ports import EpisodePort, Opening, ProxyPort, Records
from flakeproxy.runner.telemetry import SpanWaits, agent_spans
from flakeproxy.telemetry.intake import scrub_spans
from flakeproxy.wire.trace import new_trace


class EpisodeHook(Protocol):
    """Something done around each episode in the proxy (replay a session, record one)."""

    async def begun(self, episode: Episode, cell: str) -> None: ...

    async def ended(self, episode: Episode) -> None: ...


@dataclass
class EpisodeRunner:
    config: FlakeproxyConfig
    agent: Agent
    control: ControlClient | None
    #: the scenarios of episodes outside the contract's matrix (ci pillars): None is calm
    pillar_scenarios: dict[str | None, Scenario] = field(default_factory=dict)
    #: what keeps records of each episode (the proxy first: it names the episode), in the order they are asked
    ports: list[EpisodePort] = field(default_factory=list)
    hooks: list[EpisodeHook] = field(default_factory=list)  # called after the ports began and once they ended
    #: run.attribution: slots: the slots free now (an episode takes one, runs on its agent instance, gives it back)
    slots: asyncio.Queue[int] | None = None
    #: tells this run's trace ids apart from another run's on a shared sidecar
    nonce: str = field(default_factory=lambda: os.urandom(8).hex())
    #: the proxy is this run's own, started from this very config file (a local run): it knows the matrix's scenarios
    own_proxy: bool = False
    #: how long each episode waits for the agent's spans (proxy.otlp): the run's warn() is set by the engine
    span_waits: SpanWaits = field(default_factory=SpanWaits)
    #: episodes the proxy opened as the one before them ended (_merges), by episode id: their openings
    _opened: dict[str, Opening] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.config.run.attribution == "slots" and self.slots is None:
            self.slots = asyncio.Queue()
            for k in range(self.config.proxy.slots):
                self.slots.put_nowait(k)

    @property
    def has_reset(self) -> bool:
        return self.agent.has_reset or (self.config.agent is not None and self.config.agent.reset_function is not None)

    async def reset(self, how: Invocation | None = None) -> None:
        assert self.config.agent is not None
        if self.config.agent.reset_function:
            result = import_object(self.config.agent.reset_function)()
            if asyncio.iscoroutine(result):
                await result
        elif self.agent.has_reset:
            await self.agent.reset(how)

    def scenario_of(self, episode: Episode) -> Scenario | None:
        """The scenario an episode runs under (its own, in the proxy: episodes of different scenarios overlap)."""
        if episode.purpose in ("mutation", "chaos"):
            return self.pillar_scenarios[episode.scenario]
        return self.config.scenario(episode.scenario) if episode.scenario is not None else None

    def _scenario_ref(self, scenario: Scenario | None) -> str | dict[str, Any] | None:
        """How the control API is told the scenario: whole, so the proxy runs the faults this run judges, whatever
        its own config's chaos_matrix holds (a sidecar's may lack it, or define it otherwise); by name only to this
        run's own proxy, which read the same file (a matrix scenario: sending it whole made each run build a
        serializer here and a validator there, ~20 ms of its first episode)."""
        if scenario is None:
            return None
        if self.own_proxy and scenario in self.config.matrix:
            return scenario.name
        return scenario.model_dump(mode="json", exclude_defaults=True)

    def _urls(self, slot: int | None) -> dict[str, str]:
        """Listener name -> URL for the agent: its slot's copies, or (not slotted) the listeners themselves, so
        one agent config ({url:NAME}, FLAKEPROXY_URL_<NAME>) runs both ways; a port-0 listener has no URL."""
        proxy = self.config.proxy
        if slot is not None:
            return {name: f"http://{address}" for name, address in proxy.slot_addresses(slot).items()}
        own = {lst.name: lst.listen for lst in proxy.listeners} | ({"forward": proxy.forward} if proxy.forward else {})
        return {name: f"http://{address}" for name, address in own.items() if not address.endswith(":0")}

    @property
    def llm_targets(self) -> set[str]:
        return {name for name, target in self.config.targets.items() if target.api}

    async def run(self, episode: Episode, following: Episode | None = None) -> Episode:
        """The episode with its answer, latency, error and journal filled in (on a free slot, when slotted).
        `following`: the episode run next, once this one is in (one at a time), which the proxy may then open as it
        closes this one (`_merges`)."""
        if self.slots is None:
            return await self._run(episode, None, following)
        slot = await self.slots.get()
        try:
            return await self._run(episode, slot, None)
        finally:
            self.slots.put_nowait(slot)

    @functools.cached_property
    def _merges(self) -> bool:
        """Whether an episode's end opens the next one in the same call to the proxy (issue 23: one round trip
        instead of two per episode): only where nothing of the run can reach the proxy's listeners between the two,
        where its requests would land in the next episode and get its faults: this run's own proxy (of this very
        version: a sidecar may be older), episodes one at a time, an agent with no reset (which runs before its
        episode opens) and no check that calls out when it is judged (an LLM judge, a command, a query: between
        episodes)."""
        proxied = bool(self.ports) and isinstance(self.ports[0], ProxyPort)
        checks = [*(self.config.contract.invariants if self.config.contract else []), *(self.config.invariants or [])]
        quiet = not any(check.calls_out for check in checks)
        return proxied and quiet and self.own_proxy and self.slots is None and not self.has_reset

    def _opening(self, episode: Episode, slot: int | None) -> Opening:
        scenario, seed = self.scenario_of(episode), self.config.run.seed
        trace = new_trace(episode.id, episode.label, seed, self.nonce)
        return Opening(episode.label, episode.label, scenario, self._scenario_ref(scenario), seed, trace, slot)

    async def _run(self, episode: Episode, slot: int | None, following: Episode | None) -> Episode:
        how = Invocation(slot=slot, urls=self._urls(slot), session=new_session())
        await self.reset(how)
        opening, ports = self._opened.pop(episode.id, None), self.ports
        if opening is not None:  # the proxy opened it as the episode before ended (_merges); the other ports now
            ports = ports[1:]
        else:
            opening = self._opening(episode, slot)
        for port in ports:  # the first that names the episode (the proxy) names it for the others
            named = await port.begin(opening)
            opening = dataclasses.replace(opening, id=named) if named is not None else opening
        cell, trace = opening.id, opening.trace
        for hook in self.hooks:
            await hook.begun(episode, cell)
        how = dataclasses.replace(how, cell=cell, trace=dataclasses.replace(trace, cell=cell))
        exchange = await converse(self.agent, self.ports, episode, how)
        settled = await self._settle(cell) if exchange.reply.lost else None
        said = exchange.texts()
        records = await self._end(cell, said, following if self._merges else None)
        texts, journal = records.texts, records.journal
        assert texts is not None  # _end hands back the texts, as the last port that scrubbed them gave them
        spans = await agent_spans(self.control, self.config, trace, journal, cell, self.span_waits)
        spans = scrub_spans(spans, records.secrets)
        done = episode.model_copy(
            update={
                "cell_id": cell,
                "answer": texts[0],
                "latency_ms": round(exchange.reply.latency_ms, 1),
                "error": texts[1],
                "lost": exchange.reply.lost,
                "unread": exchange.reply.unread,
                "transcript": exchange.transcript(texts),
                "journal": mark_delivery(journal, self.llm_targets),
                "unsettled": len(records.unsettled),
                "late_requests": settled.late if settled else 0,
                "still_calling": settled.still_calling if settled else False,
                "scrubbed": scrubbed_count(said, texts),
                "traceparent": trace.traceparent,
                "agent_spans": spans,
            }
        )
        for hook in self.hooks:
            await hook.ended(done)
        return await self._judge_state(done)

    async def _settle(self, cell: str) -> Settled | None:
        """An episode that got no reply, where a late request would be tied to the next episode open (attribution
        none or slots): kept open until its agent stops calling (runner/late_calls.py)."""
        if self.control is None or self.config.run.attribution not in ("none", "slots"):
            return None
        if not (self.ports and isinstance(self.ports[0], ProxyPort)):
            return None
        timeout_ms = self.config.agent.timeout_ms if self.config.agent is not None else 30000
        return await settle(self.control, cell, bound_s(timeout_ms))

    async def _end(self, cell: str, texts: list[str | None], following: Episode | None = None) -> Records:
        """Every port's records of the episode, as they gave them: each redacted its own where it made them, and
        each scrubbed the texts (the agent's answer and error, each turn's) of the secrets it saw, in turn. The
        journal in time order; the secrets the ports hold in memory, together (for the agent's spans). With
        `following`, the proxy opens that episode as it closes this one (its opening kept for its _run)."""
        journal, unsettled, secrets = list[dict[str, Any]](), list[int](), set[str]()
        for k, port in enumerate(self.ports):
            if k == 0 and following is not None and isinstance(port, ProxyPort):
                opening = self._opening(following, None)
                records, named = await port.end_then_begin(cell, texts, opening)
                if named is not None:  # else its own begin() opens it, or says why it cannot
                    self._opened[following.id] = dataclasses.replace(opening, id=named)
            else:
                records = await port.end(cell, texts)
            journal += records.journal
            unsettled += records.unsettled
            texts = records.texts if records.texts is not None else texts
            secrets |= records.secrets
        if secrets:  # a secret one port saw, repeated in what another recorded (a tool's key pasted into a prompt)
            values = searchable(secrets)
            journal = [scrub_nested(e, values) for e in journal]
        journal.sort(key=lambda e: e.get("started_at", 0))
        return Records(journal, unsettled, texts, frozenset(secrets))

    def _state_checks(self, episode: Episode) -> list[Invariant]:
        """The checks of the workspace or a service that judge this episode."""
        if episode.purpose in ("mutation", "chaos"):
            scenario = self.pillar_scenarios[episode.scenario]
            return [i for i in self.config.invariants or [] if i.reads_state and i.judged_in(scenario)]
        contract = self.config.contract.invariants if self.config.contract else []
        return [i for i in contract if i.reads_state and judges(i, episode, self.config)]

    async def _judge_state(self, episode: Episode) -> Episode:
        state = self._state_checks(episode)
        if not state:
            return episode
        ctx = Context(self.config)
        verdicts = {i.id: await asyncio.to_thread(judge_episode, i, episode, ctx) for i in state}
        return episode.model_copy(update={"state_verdicts": verdicts})


def scrubbed_count(said: Sequence[str | None], kept: Sequence[str | None]) -> int:
    """How many secret values the ports scrubbed from the agent's texts (each `[redacted]` they added)."""
    return sum(
        after.count(REDACTED) - before.count(REDACTED)
        for before, after in zip(said, kept, strict=False)
        if before is not None and after is not None
    )
