"""The runner's side of the control API: the only way it reaches the proxy (local child or sidecar). Routes and
bodies come from flakeproxy.control_api; the tests drive the proxy through this client too."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import aiohttp
from pydantic import BaseModel

from flakeproxy import control_api as api
from flakeproxy.config.replays import ReplayPlan
from flakeproxy.errors import InfrastructureError
from flakeproxy.runner.http_errors import tls_failure, why
from flakeproxy.runner.retry import retrying

#: One readiness probe's bound: a proxy that accepts but does not answer is not ready (tried again).
PROBE_TIMEOUT = aiohttp.ClientTimeout(total=2)
#: While waiting for the proxy, a progress line every this many seconds.
WAIT_SAY_S = 10.0
#: How long a run that stops may spend ending the episodes it left open (the proxy waits up to 2 s on each).
RELEASE_S = 5.0


class NotReady(Exception):
    """A readiness probe found the control API not (yet) answering."""


View = TypeVar("View", bound=api.EpisodeView)


def opening_body(
    label: str,
    scenario: str | dict[str, Any] | None,
    seed: int,
    trace_id: str | None = None,
    slot: int | None = None,
    idle_ms: int | None = None,
) -> api.EpisodeBegin:
    """POST /episodes' body (also an end's `next`): the optional fields only when given."""
    body = api.EpisodeBegin(label=label, scenario=scenario, seed=seed)
    for key, value in (("trace_id", trace_id), ("slot", slot), ("idle_ms", idle_ms)):
        if value is not None:
            setattr(body, key, value)
    return body


class ControlClient:
    def __init__(
        self, url: str, token: str | None = None, token_from: Callable[[], str] = lambda: "proxy.token"
    ) -> None:
        """token_from: what sets the token, for the error when the proxy refuses it (runner/sidecar.token_hint)."""
        self.url = url.rstrip("/")
        self.headers = {"authorization": f"Bearer {token}"} if token else {}
        self.token_from = token_from
        self.session: aiohttp.ClientSession | None = None
        #: the episodes this client opened and has not ended yet (release() ends them), and whether it turned the
        #: proxy's recording on
        self.open: set[str] = set()
        self.opening: set[asyncio.Future[Any]] = set()  # POST /episodes under way
        #: the journal entries of the episodes release() ended: episodes a stop cut short, which spent all the same
        self.released: list[dict[str, Any]] = []
        self.recording = False
        #: the newest seq of a request of no episode, as the last episode's end said (None: not said yet, or a proxy
        #: that does not say): the runner reads those requests only when it moved (runner.engine)
        self.loose_seq: int | None = None

    async def __aenter__(self) -> ControlClient:
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30), headers=self.headers)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.session is not None:
            await self.session.close()

    async def call(
        self,
        route: api.Route,
        body: BaseModel | None = None,
        episode: str | None = None,
        query: list[tuple[str, str]] | None = None,
    ) -> Any:
        """One call of a route: the body (a control_api.Body without its unset fields: absent means absent), the
        reply's JSON; 4xx and 5xx raise InfrastructureError."""
        assert self.session is not None
        method, path = route.method, route.path(episode, query)
        payload = None if body is None else body.model_dump(mode="json", exclude_unset=isinstance(body, api.Body))
        try:
            async with self.session.request(method, self.url + path, json=payload) as response:
                data = await response.json(content_type=None)
                if response.status >= 400:
                    said = data.get("error", data) if isinstance(data, dict) else data
                    gone = response.status == 404 and "no open episode" in str(said)  # a trial's, unexplained
                    hint = (
                        " (the proxy was reset or restarted meanwhile: another run on the same proxy? runs sharing a "
                        "sidecar must not overlap)"
                        if gone
                        else ""
                    )
                    raise InfrastructureError(
                        f"proxy control API {method} {path} answered {response.status}: {said}{hint}"
                    )
                return data
        except aiohttp.ClientError as e:
            if tls := tls_failure(e):
                raise InfrastructureError(f"proxy control API at {self.url}: {tls}") from e
            raise InfrastructureError(
                f"proxy control API at {self.url} unreachable ({why(e)}); is the proxy running?"
            ) from e
        except TimeoutError as e:
            raise InfrastructureError(f"proxy control API {method} {path} at {self.url} did not answer in 30 s") from e

    async def wait_ready(
        self, timeout_s: float, where: str = "proxy.admin", progress: Callable[[str], None] = lambda line: None
    ) -> dict[str, Any]:
        """Wait, at most timeout_s, for /healthz to answer 200: a sidecar may start after the runner (native
        sidecars and compose give no order for readiness). A refused token is not waited for: it will not heal.
        `where` names the config key the URL came from, for the error; `progress` is told, once the first probe
        failed and then every WAIT_SAY_S, that the run is waiting and for how long at most."""
        said = [0.0]

        def waiting(elapsed: float, why_not: BaseException) -> None:
            if said[0] == 0.0:
                progress(
                    f"waiting for the proxy's control API at {self.url} ({where}) to answer: up to {timeout_s:g} s "
                    f"(proxy.ready_timeout_ms); {why_not}"
                )
                said[0] = WAIT_SAY_S
            elif elapsed >= said[0]:
                progress(f"still waiting for the proxy at {self.url}: {elapsed:.0f} s of {timeout_s:g} s; {why_not}")
                said[0] += WAIT_SAY_S

        last = "no answer"
        try:
            probe = functools.partial(self._health, where)
            return await retrying(probe, NotReady, first_s=0.1, max_s=1, within_s=timeout_s, before_sleep=waiting)
        except NotReady as e:
            last = str(e)
        raise InfrastructureError(
            f"the proxy's control API at {self.url} ({where}) was not ready within {timeout_s:g} s ({last}); "
            f"start the proxy, or point {where} at its control API"
        )

    async def _health(self, where: str = "proxy.admin") -> dict[str, Any]:
        """One /healthz probe, bounded by its own short timeout; NotReady when it should be tried again."""
        assert self.session is not None
        try:
            async with self.session.get(self.url + api.HEALTH.path(), timeout=PROBE_TIMEOUT) as response:
                if response.status == 403 and api.NOT_THE_CONTROL_API in (said := await response.text()):
                    raise InfrastructureError(f"{self.url} ({where}) is not the proxy's control API: {said[:300]}")
                if response.status == 404:  # the control API always has /healthz: something else answers here
                    raise InfrastructureError(
                        f"{self.url} ({where}) answered GET /healthz with HTTP 404: that is not the proxy's control "
                        "API (a listener, or the agent?); point it at the proxy's admin address"
                    )
                if response.status in (401, 403):
                    what = "refused the token" if self.headers else "asks for a token, and this run sends none"
                    raise InfrastructureError(
                        f"the proxy's control API at {self.url} {what} (HTTP {response.status}); "
                        f"set {self.token_from()} to the proxy's token"
                    )
                if response.status != 200:
                    raise NotReady(f"last answer: HTTP {response.status}")
                health: Any = await response.json(content_type=None)
                if not isinstance(health, dict) or not {"status", "version", "listeners"} <= set(health):
                    raise InfrastructureError(
                        f"{self.url} ({where}) answered GET /healthz with {str(health)[:120]!r}, not flakeproxy's "
                        "health: that is not the proxy's control API; point it at the proxy's admin address"
                    )
                return health
        except aiohttp.ClientError as e:
            if tls := tls_failure(e):  # it answers: waiting will not change its certificate
                raise InfrastructureError(f"the proxy's control API at {self.url}: {tls}") from e
            raise NotReady(f"last error: {why(e) or type(e).__name__}") from e
        except ValueError as e:
            raise NotReady(f"last error: {e or type(e).__name__}") from e
        except TimeoutError as e:
            raise NotReady(f"last probe got no answer in {PROBE_TIMEOUT.total:g} s") from e

    async def begin(self, body: api.EpisodeBegin) -> str:
        """Open an episode that runs its scenario (a name of the matrix, a definition, or None for calm) whatever the
        proxy's active scenario is, so episodes of different scenarios can be open at once (opening_body). With
        idle_ms the proxy ends it by itself once no call on it came for that long (a runner that was killed)."""
        return (await self._opening(self.call(api.EPISODE_BEGIN, body), api.EpisodeView)).id

    async def _opening(self, call: Awaitable[Any], reply: type[View]) -> View:
        """A call that opens an episode, as `reply`, shielded: a run stopped while the proxy opens it still learns
        its id, to end it (release)."""
        opening = asyncio.ensure_future(self._opened(call, reply))
        self.opening.add(opening)
        opening.add_done_callback(self.opening.discard)
        opening.add_done_callback(_seen)
        return await asyncio.shield(opening)

    async def _opened(self, call: Awaitable[Any], reply: type[View]) -> View:
        view = reply.model_validate(await call)
        opened: api.EpisodeView | None = view
        if isinstance(view, api.EpisodeEnded):  # an end that opened the next episode (or could not)
            self.open.discard(view.id)
            opened = view.next
        if opened is not None:
            self.open.add(opened.id)
        return view

    async def turn(self, episode: str, turn: int) -> None:
        """Tell an open episode which turn of its conversation runs now (its requests carry it; `turns:` faults
        fire only on theirs)."""
        await self.call(api.EPISODE_TURN, api.EpisodeTurn(turn=turn), episode)

    async def end(
        self, episode: str, texts: list[str | None] | None = None
    ) -> tuple[list[dict[str, Any]], list[int], list[str | None]]:
        """Close an episode: its journal (every secret of the episode scrubbed from every entry), the seqs of its
        exchanges still open after the proxy's bounded wait for them to reach the agent, and `texts` (the
        agent's answer and error) with the episode's secrets scrubbed."""
        body = api.EpisodeEnd(texts=texts) if texts is not None else None
        ended = self._ended(api.EpisodeEnded.model_validate(await self.call(api.EPISODE_END, body, episode)))
        return ended.journal, ended.unsettled, list(ended.texts or texts or [])

    async def end_then_begin(
        self, episode: str, texts: list[str | None], following: api.EpisodeBegin
    ) -> tuple[list[dict[str, Any]], list[int], list[str | None], str | None]:
        """end() and begin() in one call: the episode closed and `following` opened as it closes (one round trip
        instead of two, for episodes run one at a time); the id it opened as, or None when it could not open
        (begin() then says why). Shielded as begin() is: a stopped run still learns the id, to end it."""
        body = api.EpisodeEnd(texts=texts, next=following)
        ended = self._ended(await self._opening(self.call(api.EPISODE_END, body, episode), api.EpisodeEnded))
        return ended.journal, ended.unsettled, list(ended.texts or texts), ended.next.id if ended.next else None

    def _ended(self, ended: api.EpisodeEnded) -> api.EpisodeEnded:
        self.open.discard(ended.id)
        self.loose_seq = ended.loose_seq if self.loose_seq is None else max(self.loose_seq, ended.loose_seq or 0)
        return ended

    async def release(self, within_s: float = RELEASE_S) -> list[str]:
        """End every episode this client opened and did not end, and turn off a recording it turned on: a run that
        stops mid-episode (Ctrl-C, SIGTERM, a budget stop, a crash) must not leave a shared proxy faulting every
        request that comes next. Best effort, at most within_s; the episodes it could not end (none: all ended)."""
        deadline = asyncio.get_running_loop().time() + within_s
        if self.opening:  # opened as the run stopped: their ids come with the proxy's answers
            await asyncio.wait(list(self.opening), timeout=within_s)
        episodes = sorted(self.open)

        async def end(episode: str) -> None:
            assert self.session is not None
            route = api.EPISODE_END
            async with self.session.request(route.method, self.url + route.path(episode), json={}) as response:
                if response.status in (200, 404):  # ended now, or already (by an end call the stop cut short)
                    self.open.discard(episode)
                if response.status == 200:  # what the cut-short episode called, for what the run spent
                    with contextlib.suppress(ValueError, aiohttp.ClientError):
                        self.released += api.EpisodeEnded.model_validate(await response.json()).journal

        work = [end(e) for e in episodes] + ([self.record(False)] if self.recording else [])
        left_s = max(0.1, deadline - asyncio.get_running_loop().time())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*work, return_exceptions=True), left_s)
        return [e for e in episodes if e in self.open]

    async def activity(self, episode: str) -> tuple[int, int]:
        """An open episode's requests so far and how many of them are still open (their answer on its way)."""
        count, open_, since = 0, 0, 0
        while True:
            query = [("episode", episode), ("since", str(since)), ("limit", "500")]
            page = api.JournalPage.model_validate(await self.call(api.JOURNAL, query=query))
            count += len(page.entries)
            open_ += sum(1 for e in page.entries if not e.get("complete"))
            if not page.next or not page.entries:
                return count, open_
            since = page.next

    async def unattributed(self, since: int = 0) -> list[dict[str, Any]]:
        """Journal entries the proxy could not tie to one open episode, after seq `since` (paged through)."""
        out: list[dict[str, Any]] = []
        while True:
            query = [("unattributed", "1"), ("since", str(since)), ("limit", "500")]
            page = api.JournalPage.model_validate(await self.call(api.JOURNAL, query=query))
            out += [e for e in page.entries if e.get("episode") is None]
            if not page.next or not page.entries:
                return out
            since = page.next

    async def reset(self) -> None:
        await self.call(api.RESET)

    async def load_replay(self, episode: str, plan: ReplayPlan) -> None:
        """Serve a recorded session to this open episode instead of the upstreams."""
        await self.call(api.REPLAY_LOAD, plan, episode)

    async def end_replay(self, episode: str) -> api.ReplayReport:
        return api.ReplayReport.model_validate(await self.call(api.REPLAY_END, episode=episode))

    async def record(self, on: bool) -> None:
        await self.call(api.RECORDING, api.RecordingSet(on=on))
        self.recording = on

    async def recorded(self, episode: str) -> list[dict[str, Any]]:
        """An ended episode's recorded exchanges (the proxy forgets them)."""
        return api.Recorded.model_validate(await self.call(api.RECORDED, episode=episode)).exchanges

    async def spans(self, query: list[tuple[str, str]]) -> api.SpansReply:
        """The agent's spans the proxy's OTLP receiver kept (query: trace_id (repeated), parent, wait_ms), and how
        many reached it in all."""
        return api.SpansReply.model_validate(await self.call(api.SPANS, query=query))


def _seen(future: asyncio.Future[Any]) -> None:
    """A shielded opening's failure, read: when the run stopped meanwhile nothing awaits it, and asyncio printed it
    at exit as a traceback ("Task exception was never retrieved"), after the run's last line (a proxy that died
    with the run under a SIGTERM; release() then ends what it can)."""
    if not future.cancelled():
        future.exception()
