"""The runner's control API client when the run stops while the proxy opens an episode and the proxy dies."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest
from aiohttp import web

from flakeproxy import control_api as api
from flakeproxy.runner.control import ControlClient
from tests.support.loops import free_port


def test_an_opening_cut_off_by_a_stop_and_a_dead_proxy_leaves_no_unread_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A SIGTERM during POST /episodes, the proxy dying with the run: the shielded opening failed with nothing
    awaiting it, and asyncio printed its traceback at exit, after the run's last line (a flake of the suite's
    interrupted-run test, found under load)."""

    async def main() -> None:
        port = free_port()

        async def dies(request: web.Request) -> web.StreamResponse:
            await asyncio.sleep(0.2)
            assert request.transport is not None
            request.transport.close()  # the proxy is gone mid-answer
            return web.Response()

        app = web.Application()
        app.add_routes([web.post("/episodes", dies)])
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            async with ControlClient(f"http://127.0.0.1:{port}") as control:
                run = asyncio.ensure_future(control.begin(api.EpisodeBegin(label="e1")))
                await asyncio.sleep(0.05)
                run.cancel()  # the run stops: nothing awaits the opening any more
                with pytest.raises(asyncio.CancelledError):
                    await run
                await control.release(within_s=2)  # waits for the opening, which fails: the proxy is gone
        finally:
            await runner.cleanup()

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        asyncio.run(main())
        gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()], caplog.text


def test_release_keeps_what_the_episodes_it_ends_called() -> None:
    """A trial's budget stop at concurrency 4 left the calls of the episodes it cancelled out of what the run spent:
    release() now keeps their journal entries (the engine counts them in spend_total, as cut_short_journal)."""
    from tests.support.http import fetch
    from tests.support.proxy import config_for, running_proxy
    from tests.support.upstream import RunningUpstream

    targets = {"quotes": {"listener": "tools", "path": "/v1/quotes*"}}
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, targets)) as proxy:

        async def main() -> list[dict[str, object]]:
            async with ControlClient(proxy.control.url) as control:
                cut = await control.begin(api.EpisodeBegin(label="cut-short"))
                seen = await asyncio.to_thread(
                    fetch, proxy.listeners["tools"], "/v1/quotes", headers={"x-flakeproxy-cell": cut}
                )
                assert seen.status == 200
                assert await control.release(within_s=5) == []
                return control.released

        released = asyncio.run(main())
    assert [(e["episode"], e["url"].rsplit("/", 1)[-1], e["status"]) for e in released] == [
        (released[0]["episode"], "quotes", 200)
    ]
