"""The control API's route for the agent's own spans (added to the ControlApi's app by the server).

control_api.SPANS with ?trace_id=T[&trace_id=T2...][&parent=S][&wait_ms=N][&episode=E]
    the spans the OTLP receiver (proxy.otlp) kept for these traces: {"spans": [...], "complete", "dropped",
    "received" (spans of any trace that reached the receiver since the proxy started or was reset)}; with
    wait_ms, it first waits (at most N ms) until every trace has its root (a span with no parent, or whose parent
    is S: the runner's span the agent's trace continues), since agents export after they answered; with episode,
    every secret value that ended episode's requests carried is scrubbed from the spans (only the proxy saw
    them: it keeps an ended episode's secrets, in memory, for this call; see addons/cell_secrets.py)
"""

from __future__ import annotations

import re

from aiohttp import web

from flakeproxy import control_api as api
from flakeproxy.addons.cell_secrets import EndedSecrets, Secrets
from flakeproxy.addons.control_input import Problem, episode_id, route
from flakeproxy.telemetry.intake import scrub_spans
from flakeproxy.telemetry.store import SpanStore

TRACE_ID = re.compile(r"(?!0{32})[0-9a-f]{32}")
SPAN_ID = re.compile(r"(?!0{16})[0-9a-f]{16}")
#: the longest a request may wait for a trace's root
MAX_WAIT_MS = 60_000
#: the most traces one request may ask for
MAX_TRACES = 100


class SpanRoutes:
    def __init__(self, store: SpanStore | None, ended: EndedSecrets) -> None:
        self.store = store  # None: this proxy has no OTLP receiver
        self.ended = ended  # the secrets of the episodes that ended last (the control API keeps them)

    def add_to(self, app: web.Application) -> None:
        app.add_routes([route(api.SPANS, self.spans)])

    async def spans(self, request: web.Request) -> web.Response:
        if self.store is None:
            raise Problem(404, "this proxy has no OTLP receiver for the agent's spans; set proxy.otlp")
        traces = request.query.getall("trace_id", [])
        if not traces or len(traces) > MAX_TRACES or not all(TRACE_ID.fullmatch(t) for t in traces):
            raise Problem(400, f"give 1 to {MAX_TRACES} trace_id values, each 32 lower-case hex digits, not all zero")
        parent = request.query.get("parent")
        if parent is not None and not SPAN_ID.fullmatch(parent):
            raise Problem(400, f"parent must be 16 lower-case hex digits, not all zero, got {parent[:40]!r}")
        wait = request.query.get("wait_ms", "0")
        if not wait.isdigit() or int(wait) > MAX_WAIT_MS:
            raise Problem(400, f"wait_ms must be an integer from 0 to {MAX_WAIT_MS}, got {wait[:40]!r}")
        secrets = self._secrets(request.query.get("episode"))
        complete = await self.store.wait_complete(traces, parent, int(wait) / 1000)
        spans = scrub_spans(self.store.spans(traces), *secrets)
        return web.json_response(
            {
                "spans": [s.model_dump(mode="json") for s in spans],
                "complete": complete,
                "dropped": self.store.dropped,
                "received": self.store.received,
            }
        )

    def _secrets(self, episode: str | None) -> Secrets:
        """The secrets of the ended episode named (none without one); an episode whose secrets the proxy does not
        hold is refused, never answered with spans it could not scrub."""
        if episode is None:
            return frozenset(), frozenset()
        secrets = self.ended.get(episode_id(episode))
        if secrets is None:
            raise Problem(
                404,
                f"no ended episode {episode[:80]!r}: the proxy scrubs the spans of the last {self.ended.limit} "
                "episodes that ended (since the last reset); fetch an episode's spans once it ended",
            )
        return secrets
