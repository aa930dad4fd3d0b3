"""The control API's record and replay routes (added to the ControlApi's app by the server).

PUT /cells/{id}/replay         load a session for an open cell: {"session": {...}, "options": {...}}
POST /cells/{id}/replay/end    what it served: {"served", "unused", "unmatched": ["GET url (target t)"]}
PUT /recording                 {"on": true|false}: record whole exchanges per cell
GET /cells/{id}/recording      a cell's recorded exchanges (taken: asked once), after its requests ended
"""

from __future__ import annotations

from aiohttp import web
from pydantic import ValidationError

from flakeproxy.addons.control_input import Problem, cell_id, json_object
from flakeproxy.addons.recorder import Recorder
from flakeproxy.addons.replayer import Replayer
from flakeproxy.config.replays import ReplayPlan
from flakeproxy.proxycore.injector import Injector

ROUTES = ["PUT /cells/{id}/replay", "POST /cells/{id}/replay/end", "PUT /recording", "GET /cells/{id}/recording"]


class ReplayRoutes:
    def __init__(self, injector: Injector, replayer: Replayer, recorder: Recorder) -> None:
        self.injector, self.replayer, self.recorder = injector, replayer, recorder

    def add_to(self, app: web.Application) -> None:
        app.add_routes(
            [
                web.put("/cells/{id}/replay", self.load),
                web.post("/cells/{id}/replay/end", self.end),
                web.put("/recording", self.recording),
                web.get("/cells/{id}/recording", self.recorded),
            ]
        )

    async def load(self, request: web.Request) -> web.Response:
        cell = cell_id(request.match_info["id"])
        if cell not in self.injector.cells:
            message = f"no open cell {cell!r}; open it with POST /cells first"
            raise Problem(404, message, valid=sorted(self.injector.cells))
        try:
            plan = ReplayPlan.model_validate(await json_object(request))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise Problem(400, f"invalid replay: {where}: {first['msg']}") from e
        unknown = sorted({r.tool for r in plan.session.tool_responses} - set(self.replayer.targets))
        if unknown:
            raise Problem(
                400,
                f"session {plan.session.id!r}: tool_responses name {unknown[0]!r}, which is not a target",
                valid=sorted(self.replayer.targets),
            )
        self.replayer.load_plan(cell, plan)
        session = plan.session
        return web.json_response(
            {"id": cell, "exchanges": len(session.exchanges), "tool_responses": len(session.tool_responses)}
        )

    async def end(self, request: web.Request) -> web.Response:
        cell = cell_id(request.match_info["id"])
        replay = self.replayer.end(cell)
        if replay is None:
            raise Problem(404, f"no replay loaded for cell {cell!r}", valid=sorted(self.replayer.cells))
        return web.json_response({"id": cell, **replay.report()})

    async def recording(self, request: web.Request) -> web.Response:
        body = await json_object(request)
        if set(body) != {"on"} or not isinstance(body["on"], bool):
            raise Problem(400, 'send {"on": true} or {"on": false}')
        self.recorder.on = body["on"] or self.recorder.folder is not None
        return web.json_response({"on": self.recorder.on})

    async def recorded(self, request: web.Request) -> web.Response:
        cell = cell_id(request.match_info["id"])
        exchanges = await self.recorder.take(cell)
        return web.json_response({"id": cell, "exchanges": [x.model_dump(mode="json") for x in exchanges]})
