"""A small recording HTTP mock (`services: {name: {type: http_mock, ...}}`), for endpoints that do not
exist in staging. It answers from its routes and records every request; http_mock_assertions on the
service read the recordings (GET /_flakeproxy/requests; POST /_flakeproxy/reset clears them).

Recordings are redacted once, as they are made, as the journal is (flakeproxy.proxycore.redact): secret headers,
query parameters and body fields, and within an episode every secret value of its earlier requests. The values
redacted stay in memory, per episode, until the next reset: POST /_flakeproxy/scrub {"episode", "texts"} gives the
texts back (the agent's answer and error, at the episode's end) with that episode's secrets scrubbed (episode null:
every secret since the reset), so no secret the mock alone saw leaves it, and none is ever sent out.

This module is the server, imported only where a mock runs (aiohttp's server is not loaded by a run without
one); runner/mock_client.py reads and scrubs a mock's recordings, wherever it runs."""

from __future__ import annotations

import fnmatch
import time
from typing import Any

from aiohttp import web

from flakeproxy.config.proxy import split_host_port
from flakeproxy.config.settings import HttpMockService
from flakeproxy.errors import InfrastructureError
from flakeproxy.proxycore.redact import DEFAULT, Redactor
from flakeproxy.runner.mock_client import PREFIX
from flakeproxy.wire.call import CELL_HEADER
from flakeproxy.wire.trace import baggage_episode


class MockService:
    def __init__(self, name: str, config: HttpMockService, redactor: Redactor | None = None) -> None:
        self.name, self.config = name, config
        self.redactor = redactor or DEFAULT  # the config's: Redactor(config.redact)
        self.recorded: list[dict[str, Any]] = []
        self.secrets: dict[str | None, set[str]] = {}  # episode (None: unnamed) -> the values its requests carried
        self.runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        if request.path == f"{PREFIX}/requests":
            return web.json_response({"requests": self.recorded})
        if request.path == f"{PREFIX}/reset":
            self.recorded.clear()
            self.secrets.clear()
            return web.json_response({"ok": True})
        if request.path == f"{PREFIX}/scrub":
            return await self._scrub(request)
        body = await request.read()
        if self.config.record:
            episode = request.headers.get(CELL_HEADER) or baggage_episode(request.headers.get("baggage", ""))
            recording = {
                "episode": episode,
                "targets": [self.name],
                "method": request.method,
                "url": str(request.url),
                "started_at": time.time(),
                "request_headers": self.redactor.headers(request.headers.items()),
                "request_body": body.decode(errors="replace"),
                "fault": None,
            }
            self.recorded.append(self.redactor.entry(recording, self.secrets.setdefault(episode, set())))
        for route in self.config.routes:
            if route.method == request.method and fnmatch.fnmatchcase(request.path, route.path):
                return web.Response(status=route.status, text=route.body, headers=route.headers)
        routes = [f"{r.method} {r.path}" for r in self.config.routes]
        return web.json_response(
            {"error": f"no route for {request.method} {request.path}", "valid": routes}, status=404
        )

    def secrets_of(self, episode: str | None) -> frozenset[str]:
        """The secret values the requests named for this episode carried (None: every request since the reset)."""
        if episode is None:
            return frozenset().union(*self.secrets.values())
        return frozenset(self.secrets.get(episode, ()))

    async def _scrub(self, request: web.Request) -> web.Response:
        """{"episode": id or null, "texts": [...]} -> {"texts": [...]} with that episode's secrets scrubbed."""
        try:
            body = await request.json()
        except ValueError:
            body = None
        episode, texts = (body.get("episode"), body.get("texts")) if isinstance(body, dict) else (None, None)
        if not isinstance(texts, list) or not all(t is None or isinstance(t, str) for t in texts):
            return web.json_response({"error": 'send {"episode": "e1" or null, "texts": ["...", null]}'}, status=400)
        if episode is not None and not isinstance(episode, str):
            return web.json_response({"error": f"episode must be a string or null, got {episode!r:.80}"}, status=400)
        secrets = self.secrets_of(episode)
        return web.json_response({"texts": [None if t is None else self.redactor.literals(t, secrets) for t in texts]})

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
