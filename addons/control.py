"""The control API (aiohttp, on the proxy's own event loop): scenario, episodes, journal, reset.

Toxiproxy-sized. Errors are JSON `{"error": ...}` (4xx for every bad request), with the valid choices
where there are some. With a token configured, every call needs `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from flakeproxy import control_api as api
from flakeproxy.addons.cell_secrets import EndedSecrets, Secrets, cell_secrets, redact_texts
from flakeproxy.addons.control_input import (
    MAX_BODY_BYTES,
    Problem,
    check_token,
    episode_id,
    journal_query,
    json_object,
    optional_str,
    route,
)
from flakeproxy.addons.json_out import INLINE_ITEMS, json_list_response
from flakeproxy.addons.leases import Leases
from flakeproxy.config import Scenario, WireConfig
from flakeproxy.config.crosscheck import CrossCheckError, wire_cross_check
from flakeproxy.proxycore.injector import FOLLOW, Episode, Injector
from flakeproxy.proxycore.journal import Journal, JournalEntry
from flakeproxy.version import __version__

TRACE_ID = re.compile(r"(?!0{32})[0-9a-f]{32}")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
log = logging.getLogger(__name__)
ROUTES = [str(route) for route in api.ROUTES]


def _texts(body: dict[str, Any]) -> list[str | None] | None:
    """POST /episodes/{id}/end's optional {"texts": [...]}: texts (the agent's answer and error) to give back with
    the episode's secrets scrubbed."""
    unknown = sorted(set(body) - {"texts", "next"})
    if unknown:
        raise Problem(400, f"unknown keys {unknown}", valid=["texts", "next"])
    texts = body.get("texts")
    if texts is not None and (not isinstance(texts, list) or not all(t is None or isinstance(t, str) for t in texts)):
        raise Problem(400, 'texts must be a list of strings or nulls, e.g. {"texts": ["the answer", null]}')
    return texts


@dataclasses.dataclass(frozen=True)
class Opening:
    """An episode to open, checked (POST /episodes, or an end's `next`)."""

    label: str | None
    id: str | None
    scenario: Scenario | str | None  # FOLLOW: the active one
    seed: int
    trace_id: str | None
    slot: int | None
    idle_ms: int | None


def problem(status: int, message: str, **extra: Any) -> web.Response:
    return web.json_response({"error": message, **extra}, status=status)


class ControlApi:
    def __init__(
        self,
        config: WireConfig,
        injector: Injector,
        journal: Journal,
        token: str | None,
        listeners: Callable[[], dict[str, str]],
    ) -> None:
        self.config, self.injector, self.journal, self.token = config, injector, journal, token
        self.listeners = listeners
        self.scenarios = {s.name: s for s in config.matrix}
        #: the secrets of the episodes that ended last, for their spans (GET /spans?episode=)
        self.ended = EndedSecrets()
        #: called with (episode id, label) when an episode ends (the recorder writes its session then)
        self.on_episode_end: list[Callable[[str, str | None], Awaitable[None]]] = []
        #: called on POST /reset, after the injector and the journal (the agent's spans are cleared then)
        self.on_reset: list[Callable[[], None]] = []
        #: episodes opened with idle_ms end by themselves once no call on them came for that long (a killed runner)
        self.leases = Leases(self._expire)
        #: where the proxy says what it did by itself (an episode it ended): its stderr
        self.say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)
        self.app = web.Application(middlewares=[self._errors, self._auth], client_max_size=MAX_BODY_BYTES)
        self.app.on_cleanup.append(self._cancel_leases)
        self.app.add_routes(
            [
                route(api.HEALTH, self.healthz),
                route(api.SCENARIO_GET, self.get_scenario),
                route(api.SCENARIO_PUT, self.put_scenario),
                route(api.EPISODE_BEGIN, self.begin_episode),
                route(api.EPISODE_END, self.end_episode),
                route(api.EPISODE_TURN, self.episode_turn),
                route(api.JOURNAL, self.get_journal),
                route(api.RESET, self.reset),
            ]
        )

    @web.middleware
    async def _auth(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self.token:
            check_token(request.headers.get("authorization", ""), self.token)
        if "id" in request.match_info:  # a call on an episode renews its lease
            self.leases.touch(request.match_info["id"])
        return await handler(request)

    async def _cancel_leases(self, app: web.Application) -> None:
        self.leases.cancel()

    @web.middleware
    async def _errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except Problem as e:
            return problem(e.status, e.message, **e.extra)
        except web.HTTPException as e:
            if e.status == 404:
                return problem(404, f"no route {request.method} {request.path}", valid=ROUTES)
            if e.status == 405:
                return problem(405, f"{request.method} is not allowed on {request.path}")
            if e.status < 500:
                return problem(e.status, e.text or e.reason)
            raise
        except Exception as e:
            log.exception("control API: %s %s failed", request.method, request.path)
            return problem(500, f"internal error in the control API ({type(e).__name__}: {e}); this is a bug")

    async def healthz(self, request: web.Request) -> web.Response:
        scenario = self.injector.scenario
        return web.json_response(
            {
                "status": "ok",
                "version": __version__,
                "listeners": self.listeners(),
                "scenario": scenario.name if scenario else None,
                "open_episodes": sorted(self.injector.episodes),
                "slots": self.config.proxy.slots,
                "targets": {name: dataclasses.asdict(spec) for name, spec in self.injector.targets.items()},
            }
        )

    def _scenario_view(self) -> dict[str, Any]:
        s = self.injector.scenario
        return {
            "scenario": s.name if s else None,
            "seed": self.injector.seed,
            "definition": s.model_dump(mode="json", exclude_defaults=True) if s else None,
        }

    async def get_scenario(self, request: web.Request) -> web.Response:
        return web.json_response(self._scenario_view())

    async def put_scenario(self, request: web.Request) -> web.Response:
        body = await json_object(request)
        unknown = sorted(set(body) - {"name", "scenario", "seed"})
        if unknown:
            raise Problem(400, f"unknown keys {unknown}", valid=["name", "scenario", "seed"])
        seed = self._seed(body)
        name = optional_str(body, "name", "a scenario of chaos_matrix")
        if body.get("scenario") is not None:
            scenario: Scenario | None = self._inline(body["scenario"])
        elif name is None:
            scenario = None
        elif name in self.scenarios:
            scenario = self.scenarios[name]
        else:
            raise Problem(404, f"unknown scenario {name!r}", valid=sorted(self.scenarios))
        self.injector.set_scenario(scenario, seed)
        return web.json_response(self._scenario_view())

    def _inline(self, data: Any) -> Scenario:
        try:
            scenario = Scenario.model_validate(data)
            wire_cross_check(self.config.model_copy(update={"chaos_matrix": [scenario], "contract": None}))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise Problem(400, f"invalid scenario: {where}: {first['msg']}") from e
        except CrossCheckError as e:
            where = ".".join(str(p) for p in e.loc[2:])
            raise Problem(400, f"invalid scenario: {where}: {e.message}") from e
        return scenario

    async def begin_episode(self, request: web.Request) -> web.Response:
        """Open an episode: {id, label, scenario (a name, a definition, or null for calm; absent: follow the active
        one), seed, trace_id (W3C, 32 hex), slot, idle_ms}."""
        return web.json_response(self._begin(self._opening(await json_object(request))), status=201)

    def _opening(self, body: dict[str, Any]) -> Opening:
        """An episode's opening as POST /episodes (or an end's `next`) asks for it, checked: 400 or 404 if bad."""
        keys = ["id", "label", "scenario", "seed", "trace_id", "slot", "idle_ms"]
        unknown = sorted(set(body) - set(keys))
        if unknown:
            raise Problem(400, f"unknown keys {unknown}", valid=keys)
        label = optional_str(body, "label", "e.g. 'invariant x scenario'")
        wanted = optional_str(body, "id", "e.g. 'e12.r0'")
        trace_id = optional_str(body, "trace_id", "the 32 lower-case hex digits of a W3C trace id")
        if trace_id is not None and not TRACE_ID.fullmatch(trace_id):
            raise Problem(400, f"trace_id must be 32 lower-case hex digits, not all zero, got {trace_id[:80]!r}")
        slot, slots = body.get("slot"), self.config.proxy.slots
        if slot is not None and not slots:
            raise Problem(400, f"this proxy has no slots (proxy.slots), got slot {json.dumps(slot)[:40]}; leave it out")
        if slot is not None and (not isinstance(slot, int) or isinstance(slot, bool) or not 0 <= slot < slots):
            raise Problem(400, f"slot must be an integer from 0 to {slots - 1}, got {slot!r}", slots=slots)
        idle_ms = body.get("idle_ms")
        if idle_ms is not None and (not isinstance(idle_ms, int) or isinstance(idle_ms, bool) or idle_ms < 1):
            raise Problem(400, f"idle_ms must be a positive integer (milliseconds), got {json.dumps(idle_ms)[:80]}")
        scenario = self._episode_scenario(body) if "scenario" in body else FOLLOW
        wanted = episode_id(wanted) if wanted is not None else None
        return Opening(label, wanted, scenario, self._seed(body), trace_id, slot, idle_ms)

    def _begin(self, o: Opening) -> dict[str, Any]:
        """Open the episode now (409 if its id, trace id or slot is an open episode's); its view."""
        busy = self.injector.busy(o.id, o.trace_id, o.slot)
        if busy:
            raise Problem(409, busy)
        episode = self.injector.begin_episode(
            o.label, o.id, scenario=o.scenario, seed=o.seed, trace_id=o.trace_id, slot=o.slot
        )
        self.leases.opened(episode.id, o.idle_ms)
        return self._episode_view(episode) | ({"idle_ms": o.idle_ms} if o.idle_ms is not None else {})

    @staticmethod
    def _episode_view(episode: Episode) -> dict[str, Any]:
        out: dict[str, Any] = {"id": episode.id, "label": episode.label}
        if not episode.follows:
            out["scenario"] = episode.own.name if episode.own else None
        out.update({k: v for k, v in (("trace_id", episode.trace_id), ("slot", episode.slot)) if v is not None})
        return out

    def _seed(self, body: dict[str, Any]) -> int:
        seed = body.get("seed", self.config.run.seed)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise Problem(400, f"seed must be an integer, got {seed!r}")
        return seed

    def _episode_scenario(self, body: dict[str, Any]) -> Scenario | None:
        value = body["scenario"]
        if value is None:
            return None
        if isinstance(value, dict):
            return self._inline(value)
        if isinstance(value, str) and value in self.scenarios:
            return self.scenarios[value]
        if isinstance(value, str):
            raise Problem(404, f"unknown scenario {value!r}", valid=sorted(self.scenarios))
        raise Problem(400, f"scenario must be a name, a definition or null, got {json.dumps(value)[:80]}")

    async def episode_turn(self, request: web.Request) -> web.Response:
        """Tell an open episode which turn of its conversation runs now: {turn: 1, 2, ...}."""
        wanted = self._open(request.match_info["id"])
        body = await json_object(request)
        unknown = sorted(set(body) - {"turn"})
        if unknown:
            raise Problem(400, f"unknown keys {unknown}", valid=["turn"])
        turn = body.get("turn")
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
            raise Problem(400, f"turn must be an integer from 1 (the first turn), got {json.dumps(turn)[:80]}")
        self._open(wanted)  # still (an idle episode may have ended while the body was read)
        episode = self.injector.set_turn(wanted, turn)
        return web.json_response({**self._episode_view(episode), "turn": turn})

    def _open(self, value: str) -> str:
        """The id of an open episode, or 404 naming the open ones (and why, when the proxy ended it itself)."""
        wanted = episode_id(value)
        if wanted not in self.injector.episodes:
            gone = self.leases.why_gone(wanted)
            raise Problem(404, gone or f"no open episode {wanted!r}", valid=sorted(self.injector.episodes))
        return wanted

    async def end_episode(self, request: web.Request) -> web.StreamResponse:
        """Close an episode: its journal. With {"next": {...}} (what POST /episodes takes) the next episode opens
        as this one is closed, in the same call: a runner that runs one episode at a time saves a round trip per
        episode. `next` is checked before anything ends; if it cannot open then (409: its id, trace id
        or slot was taken meanwhile), this one is closed all the same and `next_error` says why."""
        self._open(request.match_info["id"])
        body = await json_object(request)
        texts = _texts(body)
        following = self._following(body) if body.get("next") is not None else None
        episode = self.injector.end_episode(self._open(request.match_info["id"]))
        unsettled, entries, secrets = await self._close(episode)
        snapshots = [e.snapshot(known=secrets[0]) for e in entries]
        head = {**self._episode_view(episode), "unsettled": unsettled, "loose_seq": self.journal.loose_seq}
        if texts is not None:
            head["texts"] = redact_texts(self.journal.redactor, secrets, texts)
        if following is not None:
            try:
                head["next"] = self._begin(following)
            except Problem as e:
                head["next_error"] = e.message
        return await json_list_response(request, head, "journal", snapshots)

    def _following(self, body: dict[str, Any]) -> Opening:
        """An end's {"next": {...}}, the episode to open as this one ends, checked as POST /episodes checks its
        body: 400 saying `next:` if bad."""
        following = body["next"]
        try:
            if not isinstance(following, dict):
                raise Problem(400, f'an object as POST /episodes takes, e.g. {{"label": "e2"}}, got '
                              f"{json.dumps(following)[:80]}")  # fmt: skip
            return self._opening(following)
        except Problem as e:
            raise Problem(400, f"next: {e.message}", **e.extra) from e

    async def _close(self, episode: Episode) -> tuple[list[int], list[JournalEntry], Secrets]:
        """What ending an episode does, whoever ends it: its lease dropped, its exchanges waited for (at most 2 s),
        the end hooks, its secrets kept (for its spans); the seqs still open, its entries and their secrets."""
        self.leases.drop(episode.id)
        unsettled = await self.journal.wait_delivered(episode.id)
        for hook in self.on_episode_end:
            await hook(episode.id, episode.label)
        entries = self.journal.for_episode(episode.id)
        if len(entries) <= INLINE_ITEMS:  # an episode's few entries: no thread hop
            secrets = cell_secrets(self.journal.redactor, entries)
        else:
            secrets = await asyncio.to_thread(cell_secrets, self.journal.redactor, entries)
        self.ended.keep(episode.id, secrets)
        return unsettled, entries, secrets

    async def _expire(self, wanted: str, idle_ms: int) -> None:
        """An episode whose lease ran out: ended as the runner would have, its journal kept, said on stderr."""
        if wanted not in self.injector.episodes:
            return
        episode = self.injector.end_episode(wanted)
        await self._close(episode)
        label = f" ({episode.label})" if episode.label else ""
        self.say(
            f"flakeproxy proxy: ended episode {episode.id}{label}: no control call on it came for {idle_ms} ms "
            f"(its idle_ms; was its runner killed?); its journal: GET /journal?episode={episode.id}"
        )

    async def get_journal(self, request: web.Request) -> web.StreamResponse:
        query = journal_query(request.query)
        entries, after = self.journal.page(**query)
        snapshots = [e.snapshot() for e in entries]
        tail = {"next": after, "dropped": self.journal.dropped}
        return await json_list_response(request, {}, "entries", snapshots, tail)

    async def reset(self, request: web.Request) -> web.Response:
        self.injector.reset()
        self.leases.clear()
        self.journal.clear()
        self.ended.clear()
        for hook in self.on_reset:
            hook()
        return web.json_response(self._scenario_view())
