"""The control API's record and replay routes (added to the ControlApi's app by the server); their paths and
bodies are in flakeproxy.control_api (REPLAY_LOAD, REPLAY_END, RECORDING, RECORDED)."""

from __future__ import annotations

from aiohttp import web
from pydantic import ValidationError

from flakeproxy import control_api as api
from flakeproxy.addons.control_input import MAX_PLAN_BYTES, Problem, episode_id, json_object, route
from flakeproxy.addons.recorder import Recorder
from flakeproxy.addons.replayer import Replayer
from flakeproxy.config.replays import ReplayPlan
from flakeproxy.proxycore.injector import Injector


class ReplayRoutes:
    def __init__(self, injector: Injector, replayer: Replayer, recorder: Recorder) -> None:
        self.injector, self.replayer, self.recorder = injector, replayer, recorder

    def add_to(self, app: web.Application) -> None:
        app.add_routes(
            [
                route(api.REPLAY_LOAD, self.load),
                route(api.REPLAY_END, self.end),
                route(api.RECORDING, self.recording),
                route(api.RECORDED, self.recorded),
            ]
        )

    async def load(self, request: web.Request) -> web.Response:
        episode = episode_id(request.match_info["id"])
        if episode not in self.injector.episodes:
            message = f"no open episode {episode!r}; open it with {api.EPISODE_BEGIN} first"
            raise Problem(404, message, valid=sorted(self.injector.episodes))
        try:
            plan = ReplayPlan.model_validate(await json_object(request, MAX_PLAN_BYTES))
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
        self.replayer.load_plan(episode, plan)
        session = plan.session
        return web.json_response(
            {"id": episode, "exchanges": len(session.exchanges), "tool_responses": len(session.tool_responses)}
        )

    async def end(self, request: web.Request) -> web.Response:
        episode = episode_id(request.match_info["id"])
        replay = self.replayer.end(episode)
        if replay is None:
            raise Problem(404, f"no replay loaded for episode {episode!r}", valid=sorted(self.replayer.episodes))
        return web.json_response({"id": episode, **replay.report()})

    async def recording(self, request: web.Request) -> web.Response:
        body = await json_object(request)
        if set(body) != {"on"} or not isinstance(body["on"], bool):
            raise Problem(400, 'send {"on": true} or {"on": false}')
        self.recorder.on = body["on"] or self.recorder.folder is not None
        return web.json_response({"on": self.recorder.on})

    async def recorded(self, request: web.Request) -> web.Response:
        episode = episode_id(request.match_info["id"])
        exchanges = await self.recorder.take(episode)
        return web.json_response({"id": episode, "exchanges": [x.model_dump(mode="json") for x in exchanges]})
