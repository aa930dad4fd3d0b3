"""Serve recorded sessions instead of the upstreams, per episode (the control API loads one per episode).

Added after the FaultAddon: the journal entry and the scenario's faults are decided on the request as the
agent sent it; then, unless a fault already answered, the Replayer asks the session's Matcher for the
recorded exchange and points the request at the replay upstream (loopback), so the response comes back
through the FaultAddon unchanged: journaled, streamed, and broken further by the scenario's faults if any.
The real upstream gets nothing. An unmatched request is kept (target and URL) and answered by `unmatched:`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mitmproxy import http

from flakeproxy.addons.fault_addon import KEY
from flakeproxy.addons.flow_state import FlowState
from flakeproxy.addons.recorder import buffer_request
from flakeproxy.addons.replay_upstream import REPLAY_HEADER, ReplayUpstream, until
from flakeproxy.config.replays import Exchange, ReplayPlan
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.wire.call import TargetSpec
from flakeproxy.wire.coverage import Coverage

if TYPE_CHECKING:
    from flakeproxy.replay.match import Matcher


@dataclass
class EpisodeReplay:
    plan: ReplayPlan
    matcher: Matcher
    served: int = 0
    unmatched: list[str] = field(default_factory=list)
    inexact: list[str] = field(default_factory=list)

    def report(self) -> dict[str, object]:
        return {"served": self.served, "unused": self.matcher.unused, "unmatched": self.unmatched} | (
            {"inexact": self.inexact} if self.inexact else {}
        )


def replayed_fault(state: FlowState, fault: dict[str, Any]) -> None:
    """The recorded response held a fault's effect (a 503, a cut stream): the agent receives it again, so the
    journal says so, as a fault that applied, marked replayed (it was not decided now)."""
    entry = state.entry
    entry.fault = {k: fault.get(k) for k in ("scenario", "section", "index", "kind")} | {"replayed": True}
    entry.coverage = state.coverage = Coverage(str(fault.get("kind")))
    state.coverage.changed("replay", f"replayed as recorded: {fault.get('effect') or fault.get('kind')}")


async def cut_short(flow: http.HTTPFlow, state: FlowState, exchange: Exchange, speed: float) -> None:
    """A body the agent got cut short, answered here as the proxy first sent it: the recorded bytes under the
    Content-Length it promised, then `connection: close` (so the agent's client sees the same length mismatch)."""
    await until(state.started, exchange.latency_ms, speed)
    assert exchange.status is not None
    headers = {**exchange.response_headers, "connection": "close"}
    flow.response = http.Response.make(exchange.status, exchange.response_body.encode(), headers)
    if exchange.declared_bytes is not None:
        flow.response.headers["content-length"] = str(exchange.declared_bytes)
    state.entry.upstream_called = False
    state.entry.closed_mid_body = True


class Replayer:
    def __init__(self, targets: dict[str, TargetSpec], redactor: Redactor) -> None:
        self.targets, self.redactor = targets, redactor
        self.episodes: dict[str, EpisodeReplay] = {}
        self.upstream = ReplayUpstream()

    async def running(self) -> None:
        await self.upstream.start()

    async def done(self) -> None:
        await self.upstream.stop()

    def load_plan(self, episode: str, plan: ReplayPlan) -> EpisodeReplay:
        from flakeproxy.replay.match import Matcher  # the proxy starts without flakeproxy.replay (issue 23)

        self.episodes[episode] = replay = EpisodeReplay(plan, Matcher(plan.session, plan.options, self.redactor))
        return replay

    def end(self, episode: str) -> EpisodeReplay | None:
        return self.episodes.pop(episode, None)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if self.episodes:
            buffer_request(flow)  # the body is matched before the request goes anywhere

    async def request(self, flow: http.HTTPFlow) -> None:
        state = flow.metadata.get(KEY)
        if state is None or flow.response is not None or flow.error is not None:
            return
        entry = state.entry
        replay = self.episodes.get(entry.episode or "")
        if replay is None:
            return
        options = replay.plan.options
        if options.llm == "live" and any(self.targets[t].api for t in entry.targets if t in self.targets):
            return
        body = flow.request.get_content(strict=False) or b""
        headers = flow.request.headers.items(multi=True)
        exchange = replay.matcher.match(entry.listener, entry.targets, entry.method, entry.url, headers, body)
        if exchange is None:
            self._unmatched(flow, replay, entry.url, entry.targets, entry.listener)
            return
        replay.served += 1
        if exchange.inexact:
            replay.inexact.append(f"{entry.method} {self.redactor.url(entry.url)} ({exchange.inexact})")
        if exchange.fault and state.entry.fault is None:
            replayed_fault(state, exchange.fault)
        if exchange.closed_mid_body and exchange.events is None and exchange.status is not None:
            await cut_short(flow, state, exchange, options.speed)
            return
        token = self.upstream.register(exchange, options.speed, state.started)
        flow.request.scheme, flow.request.host, flow.request.port = "http", "127.0.0.1", self.upstream.port
        flow.request.headers[REPLAY_HEADER] = token

    def _unmatched(
        self, flow: http.HTTPFlow, replay: EpisodeReplay, url: str, targets: list[str], listener: str
    ) -> None:
        where = f"target {', '.join(targets)}" if targets else f"no target; listener {listener}"
        what = f"{flow.request.method} {self.redactor.url(url)} ({where})"
        replay.unmatched.append(what)
        policy = replay.plan.options.unmatched
        if policy == "forward":
            return
        state = flow.metadata[KEY]
        state.entry.upstream_called = False
        status = 404 if policy == "404" else 502
        message = f"flakeproxy replay: no recorded response for {what} in session {replay.plan.session.id!r}"
        flow.response = http.Response.make(status, json.dumps({"error": message}), {"content-type": "application/json"})
