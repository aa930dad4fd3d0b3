"""The recording mock keeps the secrets it redacted in memory, per episode, and scrubs them from the texts it is
sent at an episode's end: one episode's (the requests named for it), or every one since its reset. A real mock on
loopback, real HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from flakeproxy.config.settings import HttpMockService, MockRoute
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.runner.mock import MockService
from flakeproxy.runner.mock_client import mock_call, mock_scrub
from flakeproxy.wire.call import CELL_HEADER
from tests.support.loops import free_port

FIRST, SECOND = "PLANTED-mock-first-3e1", "PLANTED-mock-second-9a7"
TEXTS = [f"keys {FIRST} and {SECOND}", None]


async def _exercise(config: HttpMockService, mock: MockService) -> dict[str, Any]:
    url = f"http://{config.listen}/v1/charge"
    async with aiohttp.ClientSession() as http:
        for episode, key in (("e1", FIRST), ("e2", SECOND)):
            async with http.post(url, json={"amount": 1}, headers={CELL_HEADER: episode, "x-tenant": key}) as r:
                assert r.status == 200
        async with http.post(url, json={"note": f"my key is {FIRST}"}, headers={CELL_HEADER: "e1"}) as r:
            assert r.status == 200  # the same episode repeats its key where no name says it is one
        async with http.post(f"http://{config.listen}/_flakeproxy/scrub", json={"texts": "one"}) as r:
            refused = (r.status, await r.json())
    seen = {
        "recorded": await mock_call(config, "requests"),
        "in memory": mock.secrets_of("e1"),
        "e1": await mock_scrub(config, "e1", TEXTS),
        "all": await mock_scrub(config, None, TEXTS),
        "refused": refused,
    }
    await mock_call(config, "reset")
    return seen | {"after reset": await mock_scrub(config, None, TEXTS)}


async def _run() -> dict[str, Any]:
    route = MockRoute(method="POST", path="/v1/charge", body='{"ok": true}')
    config = HttpMockService(type="http_mock", listen=f"127.0.0.1:{free_port()}", routes=[route])
    mock = MockService("billing", config, Redactor(["x-tenant"]))
    await mock.start()
    try:
        return await _exercise(config, mock)
    finally:
        await mock.stop()


def test_the_mock_scrubs_the_texts_of_the_secrets_it_saw_per_episode() -> None:
    seen = asyncio.run(_run())
    assert [r["request_headers"]["x-tenant"] for r in seen["recorded"][:2]] == ["[redacted]", "[redacted]"]
    assert seen["recorded"][2]["request_body"] == '{"note": "my key is [redacted]"}'
    assert seen["in memory"] == {FIRST}
    assert seen["e1"] == [f"keys [redacted] and {SECOND}", None]
    assert seen["all"] == ["keys [redacted] and [redacted]", None]
    assert seen["refused"][0] == 400 and "texts" in seen["refused"][1]["error"]
    assert seen["after reset"] == TEXTS
