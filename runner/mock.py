"""A small recording HTTP mock (`services: {name: {type: http_mock, ...}}`), for endpoints that do not
exist in staging. It answers from its routes and records every request; http_mock_assertions on the
service read the recordings (GET /_flakeproxy/requests; POST /_flakeproxy/reset clears them). Recordings
are redacted as the journal is (flakeproxy.proxycore.redact): secret headers, query parameters and body fields."""

from __future__ import annotations

import fnmatch
import time
from typing import Any

import aiohttp
from aiohttp import web

from flakeproxy.config.proxy import split_host_port
from flakeproxy.config.settings import HttpMockService
from flakeproxy.errors import InfrastructureError
from flakeproxy.proxycore.redact import DEFAULT, Redactor
from flakeproxy.wire.call import CELL_HEADER
from flakeproxy.wire.trace import baggage_episode

PREFIX = "/_flakeproxy"


class MockService:
    def __init__(self, name: str, config: HttpMockService, redactor: Redactor | None = None) -> None:
        self.name, self.config = name, config
        self.redactor = redactor or DEFAULT  # the config's: Redactor(config.redact)
        self.recorded: list[dict[str, Any]] = []
        self.runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        if request.path == f"{PREFIX}/requests":
            return web.json_response({"requests": self.recorded})
        if request.path == f"{PREFIX}/reset":
            self.recorded.clear()
            return web.json_response({"ok": True})
        body = await request.read()
        if self.config.record:
            recording = {
                "episode": request.headers.get(CELL_HEADER) or baggage_episode(request.headers.get("baggage", "")),
                "targets": [self.name],
                "method": request.method,
                "url": str(request.url),
                "started_at": time.time(),
                "request_headers": self.redactor.headers(request.headers.items()),
                "request_body": body.decode(errors="replace"),
                "fault": None,
            }
            self.recorded.append(self.redactor.entry(recording))
        for route in self.config.routes:
            if route.method == request.method and fnmatch.fnmatchcase(request.path, route.path):
                return web.Response(status=route.status, text=route.body, headers=route.headers)
        routes = [f"{r.method} {r.path}" for r in self.config.routes]
        return web.json_response(
            {"error": f"no route for {request.method} {request.path}", "valid": routes}, status=404
        )

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        host, port = split_host_port(self.config.listen)
        try:
            await web.TCPSite(self.runner, host, port).start()
        except OSError as e:
            raise InfrastructureError(
                f"mock service {self.name} cannot listen on {self.config.listen}: {e.strerror}"
            ) from e

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


async def mock_call(service: HttpMockService, action: str) -> list[dict[str, Any]]:
    """Reset or read a mock's recordings over HTTP (it may run in this process or elsewhere)."""
    url = f"http://{service.listen}{PREFIX}/{action}"
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
            method = http.get if action == "requests" else http.post
            async with method(url) as response:
                data = await response.json()
    except aiohttp.ClientError as e:
        raise InfrastructureError(f"mock service at {service.listen} unreachable: {e}") from e
    return list(data.get("requests", []))
