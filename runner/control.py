"""The runner's side of the control API: the only way it reaches the proxy (local child or sidecar). Routes and
bodies come from flakeproxy.control_api; the tests drive the proxy through this client too."""

from __future__ import annotations

from typing import Any

import aiohttp
from pydantic import BaseModel
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from flakeproxy import control_api as api
from flakeproxy.config.replays import ReplayPlan
from flakeproxy.errors import InfrastructureError
from flakeproxy.runner.http_errors import why

#: One readiness probe's bound: a proxy that accepts but does not answer is not ready (tried again).
PROBE_TIMEOUT = aiohttp.ClientTimeout(total=2)


class NotReady(Exception):
    """A readiness probe found the control API not (yet) answering."""


class ControlClient:
    def __init__(self, url: str, token: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.headers = {"authorization": f"Bearer {token}"} if token else {}
        self.session: aiohttp.ClientSession | None = None

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
                    raise InfrastructureError(
                        f"proxy control API {method} {path} answered {response.status}: {data.get('error', data)}"
                    )
                return data
        except aiohttp.ClientError as e:
            raise InfrastructureError(
                f"proxy control API at {self.url} unreachable ({why(e)}); is the proxy running?"
            ) from e
        except TimeoutError as e:
            raise InfrastructureError(f"proxy control API {method} {path} at {self.url} did not answer in 30 s") from e

    async def wait_ready(self, timeout_s: float, where: str = "proxy.admin") -> dict[str, Any]:
        """Wait, at most timeout_s, for /healthz to answer 200: a sidecar may start after the runner (native
        sidecars and compose give no order for readiness). A refused token is not waited for: it will not heal.
        `where` names the config key the URL came from, for the error."""
        last = "no answer"
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_delay(timeout_s),
                wait=wait_exponential(multiplier=0.1, max=1),
                retry=retry_if_exception_type(NotReady),
                reraise=True,
            ):
                with attempt:
                    return await self._health()
        except NotReady as e:
            last = str(e)
        raise InfrastructureError(
            f"the proxy's control API at {self.url} ({where}) was not ready within {timeout_s:g} s ({last}); "
            f"start the proxy, or point {where} at its control API"
        )

    async def _health(self) -> dict[str, Any]:
        """One /healthz probe, bounded by its own short timeout; NotReady when it should be tried again."""
        assert self.session is not None
        try:
            async with self.session.get(self.url + api.HEALTH.path(), timeout=PROBE_TIMEOUT) as response:
                if response.status in (401, 403):
                    raise InfrastructureError(
                        f"the proxy's control API at {self.url} refused the token (HTTP {response.status}); "
                        "set proxy.token (FLAKEPROXY_TOKEN) to the proxy's"
                    )
                if response.status != 200:
                    raise NotReady(f"last answer: HTTP {response.status}")
                health: dict[str, Any] = await response.json(content_type=None)
                return health
        except (aiohttp.ClientError, ValueError) as e:
            raise NotReady(f"last error: {e or type(e).__name__}") from e
        except TimeoutError as e:
            raise NotReady(f"last probe got no answer in {PROBE_TIMEOUT.total:g} s") from e

    async def begin(
        self,
        label: str,
        scenario: str | dict[str, Any] | None,
        seed: int,
        trace_id: str | None = None,
        slot: int | None = None,
    ) -> str:
        """Open an episode that runs `scenario` (a name of the matrix, a definition, or None for calm) whatever the
        proxy's active scenario is, so episodes of different scenarios can be open at once."""
        body = api.EpisodeBegin(label=label, scenario=scenario, seed=seed)
        for key, value in (("trace_id", trace_id), ("slot", slot)):
            if value is not None:
                setattr(body, key, value)
        return api.EpisodeView.model_validate(await self.call(api.EPISODE_BEGIN, body)).id

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
        ended = api.EpisodeEnded.model_validate(await self.call(api.EPISODE_END, body, episode))
        return ended.journal, ended.unsettled, list(ended.texts or texts or [])

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

    async def recorded(self, episode: str) -> list[dict[str, Any]]:
        """An ended episode's recorded exchanges (the proxy forgets them)."""
        return api.Recorded.model_validate(await self.call(api.RECORDED, episode=episode)).exchanges

    async def spans(self, query: list[tuple[str, str]]) -> list[dict[str, Any]]:
        """The agent's spans the proxy's OTLP receiver kept (query: trace_id (repeated), parent, wait_ms)."""
        return api.SpansReply.model_validate(await self.call(api.SPANS, query=query)).spans
