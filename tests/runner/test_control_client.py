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
