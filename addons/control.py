"""The control API (aiohttp, on the proxy's own event loop): scenario, cells, journal, reset.

Toxiproxy-sized. Errors are JSON with the valid choices. With a token configured, every call needs
`Authorization: Bearer <token>`.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from flakeproxy import __version__
from flakeproxy.config import FlakeproxyConfig, Scenario
from flakeproxy.config.crosscheck import CrossCheckError, cross_check
from flakeproxy.injector import Injector
from flakeproxy.journal import Journal

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def problem(status: int, message: str, **extra: Any) -> web.Response:
    return web.json_response({"error": message, **extra}, status=status)


class ControlApi:
    def __init__(
        self,
        config: FlakeproxyConfig,
        injector: Injector,
        journal: Journal,
        token: str | None,
        listeners: Callable[[], dict[str, str]],
    ) -> None:
        self.config, self.injector, self.journal, self.token = config, injector, journal, token
        self.listeners = listeners
        self.scenarios = {s.name: s for s in config.matrix}
        self.app = web.Application(middlewares=[self._auth, self._errors])
        self.app.add_routes(
            [
                web.get("/healthz", self.healthz),
                web.get("/scenario", self.get_scenario),
                web.put("/scenario", self.put_scenario),
                web.post("/cells", self.begin_cell),
                web.post("/cells/{id}/end", self.end_cell),
                web.get("/journal", self.get_journal),
                web.post("/reset", self.reset),
            ]
        )

    @web.middleware
    async def _auth(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self.token:
            given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return problem(401, "missing or wrong token; send Authorization: Bearer <proxy.token>")
        return await handler(request)

    @web.middleware
    async def _errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as e:
            if e.status == 404:
                routes = [
                    "GET /healthz",
                    "GET|PUT /scenario",
                    "POST /cells",
                    "POST /cells/{id}/end",
                    "GET /journal",
                    "POST /reset",
                ]
                return problem(404, f"no route {request.method} {request.path}", valid=routes)
            if e.status == 405:
                return problem(405, f"{request.method} is not allowed on {request.path}")
            raise

    async def _body(self, request: web.Request) -> dict[str, Any]:
        if not request.can_read_body:
            return {}
        try:
            data = await request.json()
        except json.JSONDecodeError as e:
            raise web.HTTPBadRequest(
                text=json.dumps({"error": f"body is not JSON ({e})"}), content_type="application/json"
            ) from e
        if not isinstance(data, dict):
            raise web.HTTPBadRequest(
                text=json.dumps({"error": "body must be a JSON object"}), content_type="application/json"
            )
        return data

    async def healthz(self, request: web.Request) -> web.Response:
        scenario = self.injector.scenario
        return web.json_response(
            {
                "status": "ok",
                "version": __version__,
                "listeners": self.listeners(),
                "scenario": scenario.name if scenario else None,
                "open_cells": sorted(self.injector.cells),
            }
        )

    def _scenario_view(self) -> dict[str, Any]:
        s = self.injector.scenario
        return {
            "scenario": s.name if s else None,
            "seed": self.injector.seed,
            "definition": s.model_dump(mode="json", exclude_defaults=True) if s else None,
        }

    async def get_scenario(self, request: web.Request) -> web.Response:
        return web.json_response(self._scenario_view())

    async def put_scenario(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        unknown = sorted(set(body) - {"name", "scenario", "seed"})
        if unknown:
            return problem(400, f"unknown keys {unknown}", valid=["name", "scenario", "seed"])
        seed = body.get("seed", self.config.run.seed)
        if not isinstance(seed, int) or isinstance(seed, bool):
            return problem(400, f"seed must be an integer, got {seed!r}")
        if body.get("scenario") is not None:
            scenario = self._inline(body["scenario"])
            if isinstance(scenario, web.Response):
                return scenario
        elif body.get("name") is None:
            scenario = None
        elif body["name"] in self.scenarios:
            scenario = self.scenarios[body["name"]]
        else:
            return problem(404, f"unknown scenario {body['name']!r}", valid=sorted(self.scenarios))
        self.injector.set_scenario(scenario, seed)
        return web.json_response(self._scenario_view())

    def _inline(self, data: Any) -> Scenario | web.Response:
        try:
            scenario = Scenario.model_validate(data)
            cross_check(self.config.model_copy(update={"chaos_matrix": [scenario], "contract": None}))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            return problem(400, f"invalid scenario: {where}: {first['msg']}")
        except CrossCheckError as e:
            where = ".".join(str(p) for p in e.loc[2:])
            return problem(400, f"invalid scenario: {where}: {e.message}")
        return scenario

    async def begin_cell(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        cell_id = body.get("id")
        if cell_id is not None and (not isinstance(cell_id, str) or cell_id in self.injector.cells):
            return problem(409, f"cell id {cell_id!r} is already open or not a string")
        cell = self.injector.begin_cell(body.get("label"), cell_id)
        return web.json_response({"id": cell.id, "label": cell.label}, status=201)

    async def end_cell(self, request: web.Request) -> web.Response:
        cell_id = request.match_info["id"]
        if cell_id not in self.injector.cells:
            return problem(404, f"no open cell {cell_id!r}", valid=sorted(self.injector.cells))
        cell = self.injector.end_cell(cell_id)
        entries = [e.to_json() for e in self.journal.for_cell(cell.id)]
        return web.json_response({"id": cell.id, "label": cell.label, "journal": entries})

    async def get_journal(self, request: web.Request) -> web.Response:
        cell = request.query.get("cell")
        entries = self.journal.for_cell(cell) if cell else self.journal.entries
        return web.json_response({"entries": [e.to_json() for e in entries], "dropped": self.journal.dropped})

    async def reset(self, request: web.Request) -> web.Response:
        self.injector.reset()
        self.journal.clear()
        return web.json_response(self._scenario_view())
