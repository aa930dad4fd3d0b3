"""The runner's side of the control API: the only way it reaches the proxy (local child or sidecar)."""

from __future__ import annotations

from typing import Any

import aiohttp
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from flakeproxy.errors import InfrastructureError

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

    async def call(self, method: str, path: str, body: Any = None) -> Any:
        assert self.session is not None
        try:
            async with self.session.request(method, self.url + path, json=body) as response:
                data = await response.json(content_type=None)
                if response.status >= 400:
                    raise InfrastructureError(
                        f"proxy control API {method} {path} answered {response.status}: {data.get('error', data)}"
                    )
                return data
        except aiohttp.ClientError as e:
            raise InfrastructureError(
                f"proxy control API at {self.url} unreachable ({e}); is the proxy running?"
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
            async with self.session.get(self.url + "/healthz", timeout=PROBE_TIMEOUT) as response:
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
        """Open a cell that runs `scenario` (a name of the matrix, a definition, or None for calm) whatever the
        proxy's active scenario is, so cells of different scenarios can be open at once."""
        body: dict[str, Any] = {"label": label, "scenario": scenario, "seed": seed}
        body.update({k: v for k, v in (("trace_id", trace_id), ("slot", slot)) if v is not None})
        return str((await self.call("POST", "/cells", body))["id"])

    async def end(
        self, cell: str, texts: list[str | None] | None = None
    ) -> tuple[list[dict[str, Any]], list[int], list[str | None]]:
        """Close a cell: its journal (every secret of the cell scrubbed from every entry), the seqs of its
        exchanges still open after the proxy's bounded wait for them to reach the agent, and `texts` (the
        agent's answer and error) with the cell's secrets scrubbed."""
        ended = await self.call("POST", f"/cells/{cell}/end", {"texts": texts} if texts is not None else None)
        unsettled = [int(seq) for seq in ended.get("unsettled") or []]
        return list(ended["journal"]), unsettled, list(ended.get("texts") or texts or [])

    async def unattributed(self) -> list[dict[str, Any]]:
        """Journal entries the proxy could not tie to one open cell (paged through with `since`)."""
        out: list[dict[str, Any]] = []
        since = 0
        while True:
            page = await self.call("GET", f"/journal?unattributed=1&since={since}&limit=500")
            entries = [e for e in page["entries"] if e.get("cell") is None]
            out += entries
            following = page.get("next")
            if not following or not page["entries"]:
                return out
            since = int(following)

    async def reset(self) -> None:
        await self.call("POST", "/reset")
