"""Reading and scrubbing an http_mock service's recordings over HTTP (the server is runner/mock.py; the mock may
run in this process or elsewhere, `flakeproxy mock`)."""

from __future__ import annotations

from typing import Any

import aiohttp

from flakeproxy.config.settings import HttpMockService
from flakeproxy.errors import InfrastructureError
from flakeproxy.runner.http_errors import why

PREFIX = "/_flakeproxy"


async def mock_call(service: HttpMockService, action: str) -> list[dict[str, Any]]:
    """Reset or read a mock's recordings over HTTP (it may run in this process or elsewhere)."""
    url = f"http://{service.listen}{PREFIX}/{action}"
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
            method = http.get if action == "requests" else http.post
            async with method(url) as response:
                data = await response.json()
    except aiohttp.ClientError as e:
        raise InfrastructureError(f"mock service at {service.listen} unreachable: {why(e)}") from e
    return list(data.get("requests", []))


async def mock_scrub(service: HttpMockService, episode: str | None, texts: list[str | None]) -> list[str | None]:
    """The texts with the secrets the mock saw in this episode's requests (None: all since its reset) scrubbed."""
    url = f"http://{service.listen}{PREFIX}/scrub"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http,
            http.post(url, json={"episode": episode, "texts": texts}) as response,
        ):
            data = await response.json()
            if response.status != 200:
                raise InfrastructureError(f"mock service at {service.listen} refused to scrub texts: {data}")
    except aiohttp.ClientError as e:
        raise InfrastructureError(f"mock service at {service.listen} unreachable: {why(e)}") from e
    return list(data["texts"])
