"""The runner's side of the control API: the only way it reaches the proxy (local child or sidecar)."""

from __future__ import annotations

from typing import Any

import aiohttp
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_fixed

from flakeproxy.errors import InfrastructureError


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

    async def wait_healthy(self, timeout_s: float = 20) -> dict[str, Any]:
        """Wait for /healthz (infrastructure readiness is what tenacity is for)."""
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_delay(timeout_s),
                wait=wait_fixed(0.1),
                retry=retry_if_exception_type(InfrastructureError),
                reraise=True,
            ):
                with attempt:
                    health: dict[str, Any] = await self.call("GET", "/healthz")
                    return health
        except InfrastructureError as e:
            raise InfrastructureError(f"proxy not healthy after {timeout_s:g} s: {e}") from e
        raise AssertionError("unreachable")

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
