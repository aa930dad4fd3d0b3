"""What the calm scenario's episodes show about the world around the agent, so a broken world is not scored as
the agent's failure.

- A listener whose upstream answered none of its calm requests (refused, DNS, TLS, a connect or read timeout):
  nothing the agent does through it can be judged, so the run stops there, exit 3 (flakeproxy.runner.engine).
  Some failed: a warning, since the agent may have been judged on a broken upstream.
- An agent.response_path that found nothing in any calm answer, all of them JSON: a config problem, not the
  agent failing to answer; its unread answers are ERROR (`completes` too), never FAIL. Where the path found
  calm answers, a chaos answer it finds nothing in is the agent answering in another shape (completes FAILs).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.errors import InfrastructureError
from flakeproxy.planning.plan import is_calm
from flakeproxy.proxycore.journal import agent_left
from flakeproxy.results import Episode, UnreadAnswer
from flakeproxy.wire.record import read_fault


def calm_episodes(config: FlakeproxyConfig, episodes: Iterable[Episode]) -> list[Episode]:
    """The matrix episodes of its calm scenario (no faults), in the order given."""
    calm = {s.name for s in config.matrix if is_calm(s)}
    return [e for e in episodes if e.purpose == "matrix" and e.scenario in calm]


def upstream_failure(entry: dict[str, Any]) -> str | None:
    """The error of a request its upstream never answered (the agent got the proxy's 502, or 504 for a read
    timeout); None when the upstream answered (whatever the status), a fault acted, or the agent hung up first."""
    error = entry.get("error")
    if not error or not entry.get("upstream_called", True) or agent_left(error):
        return None
    fault = read_fault(entry.get("fault"))
    if fault is not None and fault.applied:
        return None
    return " ".join(str(error).split())[:300] if entry.get("status") in (502, 504) else None


@dataclass(frozen=True)
class UpstreamTrouble:
    """A listener's upstream that failed `failed` of the `requests` its calm episodes sent through it."""

    listener: str
    upstream: str
    scenario: str
    failed: int
    requests: int
    error: str  # the first failure's

    @property
    def down(self) -> bool:
        return self.failed == self.requests

    def line(self) -> str:
        where = f"the upstream of listener {self.listener} ({self.upstream})"
        if self.down:
            return (
                f"{where} failed every request of the calm scenario {self.scenario} ({self.requests}): {self.error}; "
                "nothing the agent does through it can be judged: start that upstream or fix the listener's upstream"
            )
        return (
            f"warning: {where} failed {self.failed} of {self.requests} requests of the calm scenario "
            f"{self.scenario}: {self.error}; verdicts may show that broken upstream, not the agent"
        )


def upstream_trouble(config: FlakeproxyConfig, scenario: str, episodes: Iterable[Episode]) -> list[UpstreamTrouble]:
    """Per listener (in config order), its upstream's failures in the episodes of calm `scenario`, if any."""
    upstreams = {lst.name: str(lst.upstream).rstrip("/") for lst in config.proxy.listeners}
    seen: dict[str, list[str | None]] = {name: [] for name in upstreams}
    for episode in calm_episodes(config, episodes):
        for entry in episode.journal if episode.scenario == scenario else []:
            if entry.get("listener") in seen:
                seen[entry["listener"]].append(upstream_failure(entry))
    out = []
    for name, outcomes in seen.items():
        failed = [error for error in outcomes if error is not None]
        if failed:
            out.append(UpstreamTrouble(name, upstreams[name], scenario, len(failed), len(outcomes), failed[0]))
    return out


def response_path_unread(config: FlakeproxyConfig, episodes: Iterable[Episode]) -> str | None:
    """Why agent.response_path is a config problem: it found nothing in any calm answer, each of them JSON (the
    keys the bodies had where it stopped); None when it found an answer in one, or no calm answer was read."""
    path = getattr(config.agent, "response_path", None)
    calm = calm_episodes(config, episodes)
    unread = [e.unread for e in calm if e.unread is not None]
    if path is None or not unread or any(e.answer is not None for e in calm):
        return None
    return f"agent.response_path {path} matched nothing in the calm answers; {_held(unread)}"


def _held(unread: list[UnreadAnswer]) -> str:
    """What the bodies held where the path stopped (the first answer's place): their keys, or their kind."""
    first = unread[0]
    where = "the bodies" if first.at == "$" else f"at {first.at} the bodies"
    same = [u for u in unread if u.at == first.at]
    keys = list(dict.fromkeys(k for u in same for k in u.keys))
    if first.holds == "object":
        return f"{where} have keys: {', '.join(keys)}" if keys else f"{where} are empty objects"
    return f"{where} hold a JSON {first.holds}, not an object"


def check_calm(config: FlakeproxyConfig, scenario: str, episodes: Iterable[Episode]) -> list[str]:
    """Once calm `scenario` has run: raise InfrastructureError (exit 3) when a listener's upstream failed every
    request of it, naming each such listener, upstream and error; else the warning lines of what it showed."""
    episodes = list(episodes)
    trouble = upstream_trouble(config, scenario, episodes)
    down = [t.line() for t in trouble if t.down]
    if down:
        raise InfrastructureError("; ".join(down))
    lines = [t.line() for t in trouble]
    unread = response_path_unread(config, episodes)
    if unread:
        lines.append(f"warning: {unread}; the checks of the answers it could not read are ERROR")
    return lines
