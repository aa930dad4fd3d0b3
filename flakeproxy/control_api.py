"""The proxy's control API, written once: every route and the typed request and reply bodies, shared by the
addon that serves them (addons/control.py, replay_routes.py, span_routes.py), the runner's client
(runner/control.py) and the tests.

An episode here is one agent invocation's slice of the proxy (its scenario, seed, counters and journal entries);
requests name theirs with the `x-flakeproxy-cell` header (its historical name; it carries the episode id). The
"cells" of results.json are something else: one invariant x one scenario.

Pure: no aiohttp, no mitmproxy; the addon and the client bring their own HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from pydantic import BaseModel, ConfigDict, Field


@dataclass(frozen=True)
class Route:
    """One route: its method and path template (`{id}`: an episode id)."""

    method: str
    template: str

    def path(self, episode: str | None = None, query: list[tuple[str, str]] | None = None) -> str:
        """The path to call: the episode id filled in (quoted), the query appended."""
        path = self.template if episode is None else self.template.replace("{id}", quote(episode, safe=""))
        return path + (f"?{urlencode(query)}" if query else "")

    def __str__(self) -> str:
        return f"{self.method} {self.template}"


HEALTH = Route("GET", "/healthz")
SCENARIO_GET = Route("GET", "/scenario")
SCENARIO_PUT = Route("PUT", "/scenario")
EPISODE_BEGIN = Route("POST", "/episodes")
EPISODE_END = Route("POST", "/episodes/{id}/end")
EPISODE_TURN = Route("POST", "/episodes/{id}/turn")
JOURNAL = Route("GET", "/journal")
RESET = Route("POST", "/reset")
REPLAY_LOAD = Route("PUT", "/episodes/{id}/replay")
REPLAY_END = Route("POST", "/episodes/{id}/replay/end")
RECORDING = Route("PUT", "/recording")
RECORDED = Route("GET", "/episodes/{id}/recording")
SPANS = Route("GET", "/spans")

#: Every route, in the order a 404 lists them.
ROUTES = [
    HEALTH,
    SCENARIO_GET,
    SCENARIO_PUT,
    EPISODE_BEGIN,
    EPISODE_END,
    EPISODE_TURN,
    JOURNAL,
    RESET,
    REPLAY_LOAD,
    REPLAY_END,
    RECORDING,
    RECORDED,
    SPANS,
]

#: The query parameters of GET /journal.
JOURNAL_QUERY = ["since", "limit", "episode", "unattributed"]


#: how a listener's 403 to a request carrying the control token begins (addons/token_guard.py): the runner tells it
#: from a refused token
NOT_THE_CONTROL_API = "this is a flakeproxy listener, not its control API"


class Body(BaseModel):
    """A request body: unknown keys are refused, so a typo is an error, not a silent default."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class Reply(BaseModel):
    """A reply body: extra keys are kept, so an older client reads a newer proxy."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class ScenarioSet(Body):
    """PUT /scenario: a scenario of chaos_matrix by name, or an inline definition; null name: calm."""

    name: str | None = None
    scenario: dict[str, Any] | None = None
    seed: int | None = None


class EpisodeBegin(Body):
    """POST /episodes: scenario is a name, a definition, or null for calm; absent, the episode follows the active
    one (PUT /scenario). trace_id (W3C, 32 hex) and slot say how its requests are recognised. With idle_ms the
    proxy ends the episode itself once no call on it (turn, replay, end) came for that long: a lease, so that a
    runner killed mid-episode does not leave it catching everyone's requests."""

    id: str | None = None
    label: str | None = None
    scenario: str | dict[str, Any] | None = None
    seed: int | None = None
    trace_id: str | None = None
    slot: int | None = None
    idle_ms: int | None = Field(None, ge=1)


class EpisodeEnd(Body):
    """POST /episodes/{id}/end: texts (the agent's answer and error) to give back with its secrets scrubbed; next:
    the episode to open as this one ends (what POST /episodes takes), one round trip instead of two."""

    texts: list[str | None] | None = None
    next: EpisodeBegin | None = None


class EpisodeTurn(Body):
    """POST /episodes/{id}/turn: the turn of its conversation the episode runs from now on (1 = the first). Its
    requests carry it in the journal; faults with `turns:` fire only on theirs; after_calls and times go on
    counting across turns."""

    turn: int = Field(ge=1)


class RecordingSet(Body):
    """PUT /recording."""

    on: bool


class Health(Reply):
    """GET /healthz. targets: what the proxy matches requests by, per target name (listener, path, method,
    mcp_tool, api, host), for a runner to check they are its own; None from a proxy that does not say (older)."""

    status: str
    version: str
    listeners: dict[str, str]
    scenario: str | None
    open_episodes: list[str]
    slots: int
    targets: dict[str, dict[str, str | None]] | None = None


class ScenarioView(Reply):
    scenario: str | None
    seed: int
    definition: dict[str, Any] | None


class EpisodeView(Reply):
    """An open or ended episode; `scenario` only when it does not follow the active one."""

    id: str
    label: str | None = None


class EpisodeTurnSet(EpisodeView):
    """What POST /episodes/{id}/turn gives back: the episode and the turn it runs now."""

    turn: int


class EpisodeEnded(EpisodeView):
    """What POST /episodes/{id}/end gives back: the episode's journal (its secrets scrubbed from every entry), the
    seqs of its exchanges still open after the bounded wait, the texts it was sent, scrubbed, and the seq of the
    newest request of no episode (`loose_seq`: a runner asks for those only when it moved; None from a proxy that
    does not say)."""

    unsettled: list[int] = Field(default_factory=list)
    loose_seq: int | None = None
    texts: list[str | None] | None = None
    journal: list[dict[str, Any]] = Field(default_factory=list)
    #: the episode `next` opened; or, when it could not open (409), next_error says why (this one ended all the same)
    next: EpisodeView | None = None
    next_error: str | None = None


class JournalPage(Reply):
    entries: list[dict[str, Any]]
    next: int | None = None
    dropped: int = 0


class ReplayLoaded(Reply):
    id: str
    exchanges: int
    tool_responses: int


class ReplayReport(Reply):
    """What a replay served: counts and the requests it had no recorded answer for."""

    id: str
    served: int
    unused: int
    unmatched: list[str]
    inexact: list[str] = Field(default_factory=list)


class Recorded(Reply):
    id: str
    exchanges: list[dict[str, Any]]


class SpansReply(Reply):
    """What GET /spans gives back (query: trace_id, repeated; parent; wait_ms; episode): the agent's spans of these
    traces, and with `episode` (an ended one) every secret of that episode's requests scrubbed from them."""

    spans: list[dict[str, Any]]
    complete: bool
    dropped: int = 0
    #: spans of any trace that reached the receiver since the proxy started or was reset (None: an older proxy)
    received: int | None = None
