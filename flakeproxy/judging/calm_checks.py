"""What the calm scenario's episodes show about the world around the agent, so a broken world is not scored as
the agent's failure. The rule, per listener, over the requests its calm episodes sent through it (a request one
of our faults acted on is never counted; the calm scenario has none):

- Its upstream answered none of them (refused, DNS, TLS, a connect or read timeout: the proxy's 502 or 504):
  nothing the agent does through it can be judged, so the run stops there, exit 3 (flakeproxy.runner.engine),
  one line naming the listener, its upstream and the error. Some failed: a warning, since the agent may have
  been judged on a broken upstream.
- Its upstream ANSWERED each of them with an error status, on a listener an LLM target (`api:`) uses: any
  status >= 400 (401/403 a key, 404 a base URL or model, 429 a quota, 5xx an outage, 400 what the agent sends).
  No agent gets that from its model on purpose, and an agent that copes with it (a fallback answer) would
  otherwise PASS every check without ever having talked to its model: exit 3, one line naming the listener, its
  upstream, the statuses, the start of the first error body (as the journal redacted it) and a fix by status
  (flakeproxy.judging.upstream_status). Some, not all: a warning, except for 429s (SDKs retry them as a matter
  of course).
- On a tool or MCP listener: each answered 401/403 or 5xx (no tool is meant to say that to every question)
  -> exit 3 likewise; each answered with an error, some of them another 4xx (a 404 for an unknown item may
  be what the agent is meant to get) -> a warning only. Some, not all: nothing (the agent's own business).
- Never answered and answered with an error mix: exit 3 when every request is one or the other of the kinds
  above that stop the run.
- The agent answered none of the calm scenario's episodes (each an agent error: it timed out, hung up, answered
  HTTP 5xx or an error status of its own, raised, or answered nothing agent.response_path could read): nothing
  it does can be judged against a world in which it never worked, so the run stops there, exit 3, one line
  naming how many, the first error and the fix (agent.timeout_ms for a timeout, agent.response_path with the
  keys the bodies had for an unread answer, else the agent's logs). Some answered: nothing new, verdicts stand.
  Checked after the listeners: an upstream that is down explains an agent that failed, and says it better.
- An agent.response_path that found nothing in a calm answer while the path found one elsewhere (in calm or
  under chaos) is the agent answering in another shape (completes FAILs); where it found nothing in any calm
  answer, all of them JSON, the answers it could not read anywhere are ERROR (`completes` too), never FAIL (a
  merged run of shards, which no calm check stops).
- A tool target with neither `api` nor `mcp_tool` whose calm requests carry MCP's headers (an MCP server behind
  a path target, as `flakeproxy init` writes any tool API): a warning, since its faults hit the handshake and the
  listings as often as a tool call and max_tool_calls counts them all; mcp_tool targets fault and count
  tools/call alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.errors import InfrastructureError
from flakeproxy.judging.upstream_status import answered_error, excerpt, fixes, hard, statuses
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
    """What one listener's upstream did with the `requests` the calm episodes of `scenario` sent through it: the
    errors of those it never answered (`unanswered`), and the status and body excerpt of those it answered with
    an error (`errors`). `llm`: an LLM target (one with `api:`) uses the listener."""

    listener: str
    upstream: str
    scenario: str
    llm: bool
    requests: int
    unanswered: tuple[str, ...] = ()
    errors: tuple[tuple[int, str], ...] = ()

    @property
    def down(self) -> bool:
        """No request got an answer the agent can be judged on: each was never answered, or answered with an
        error that no upstream gives on purpose (upstream_status.hard)."""
        answered = [status for status, _ in self.errors if hard(status, self.llm)]
        return self.requests > 0 and len(self.unanswered) + len(answered) == self.requests

    def line(self) -> str:
        """The exit-3 line when down, else a warning line, or "" when there is nothing to say."""
        where = f"the upstream of listener {self.listener} ({self.upstream})"
        calm = f"the calm scenario {self.scenario}"
        if self.down and not self.errors:
            return (
                f"{where} failed every request of {calm} ({self.requests}): {self.unanswered[0]}; "
                "nothing the agent does through it can be judged: start that upstream or fix the listener's upstream"
            )
        if self.down:
            return f"{where} answered every request of {calm} ({self.requests}) with an error{self._errors()}"
        if self.unanswered:
            return (
                f"warning: {where} failed {len(self.unanswered)} of {self.requests} requests of {calm}: "
                f"{self.unanswered[0]}; verdicts may show that broken upstream, not the agent"
            )
        if self.errors and not self.llm and len(self.errors) == self.requests:  # a 404 or 422 a tool may mean
            found = [status for status, _ in self.errors]
            return (
                f"warning: {where} answered every request of {calm} ({self.requests}) with an error, "
                f"{statuses(found)}: {self.errors[0][1]}; unless the agent is meant to get that, verdicts show that "
                f"upstream, not the agent: {fixes(found, llm=False)}"
            )
        some = [(status, body) for status, body in self.errors if status != 429] if self.llm else []
        if some:  # an SDK retries a 429 as a matter of course: not a sign of a broken world
            return (
                f"warning: {where} answered {len(some)} of {self.requests} requests of {calm} with an error, "
                f"{statuses([s for s, _ in some])}: {some[0][1]}; verdicts may show that broken upstream, not the agent"
            )
        return ""

    def _errors(self) -> str:
        """The statuses, the first error body, what got no answer, and the fixes of a listener that is down."""
        found = [status for status, _ in self.errors]
        none = f"; {len(self.unanswered)} got no answer: {self.unanswered[0]}" if self.unanswered else ""
        fix = fixes(found, self.llm) + ("; start that upstream" if self.unanswered else "")
        return f", {statuses(found)}: {self.errors[0][1]}{none}; nothing the agent does through it can be judged: {fix}"


def upstream_trouble(config: FlakeproxyConfig, scenario: str, episodes: Iterable[Episode]) -> list[UpstreamTrouble]:
    """Per listener (in config order), what its upstream did wrong in the episodes of calm `scenario`, if it is
    worth a line (UpstreamTrouble.line)."""
    llm = {target.listener for target in config.targets.values() if target.api}
    upstreams = {lst.name: str(lst.upstream).rstrip("/") for lst in config.proxy.listeners}
    seen: dict[str, list[dict[str, Any]]] = {name: [] for name in upstreams}
    for episode in calm_episodes(config, episodes):
        for entry in episode.journal if episode.scenario == scenario else []:
            if entry.get("listener") in seen:
                seen[entry["listener"]].append(entry)
    out = []
    for name, entries in seen.items():
        unanswered = [error for error in map(upstream_failure, entries) if error is not None]
        answered = [e for e in entries if upstream_failure(e) is None]
        errors = [(status, excerpt(e)) for e in answered if (status := answered_error(e)) is not None]
        trouble = UpstreamTrouble(
            name, upstreams[name], scenario, name in llm, len(entries), tuple(unanswered), tuple(errors)
        )
        if trouble.line():
            out.append(trouble)
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


def _answered(episode: Episode) -> bool:
    """Whether the agent gave an answer in the episode (in any turn of a conversation), or no error either."""
    turns = episode.transcript or []
    return episode.answer is not None or episode.error is None or any(t.answer is not None for t in turns)


def _first_error(episode: Episode) -> str:
    """The episode's own error: a conversation's first turn that failed (its later turns only say they were not
    sent because of it)."""
    turns = [t.error for t in episode.transcript or [] if t.sent and t.error]
    return (turns[0] if turns else episode.error) or ""


def agent_answered_none(config: FlakeproxyConfig, scenario: str, episodes: Iterable[Episode]) -> str | None:
    """The exit-3 line when the agent answered none of the episodes of calm `scenario` (each an agent error): how
    many, the first error and the fix; None when it answered one, or none ran."""
    episodes = list(episodes)
    calm = [e for e in calm_episodes(config, episodes) if e.scenario == scenario]
    if not calm or any(_answered(e) for e in calm):
        return None
    first = _first_error(calm[0])
    unread = response_path_unread(config, episodes) if any(e.unread is not None for e in calm) else None
    if unread is not None:
        fix = f"{unread}; fix agent.response_path"
    elif "timed out after" in first:
        now = f" (now {config.agent.timeout_ms})" if config.agent is not None else ""
        fix = f"raise agent.timeout_ms{now} if the agent is only slow, else see in the agent's logs why it hangs"
    else:
        fix = "see the agent's logs for why it fails when nothing is broken"
    many = f"the {len(calm)} episodes" if len(calm) > 1 else "the one episode"
    return (
        f"the agent answered none of {many} of the calm scenario {scenario}, each an agent error, the first: "
        f"{' '.join(first.split())[:300]}; nothing it does can be judged against a world in which it never "
        f"worked: {fix}"
    )


def check_calm(config: FlakeproxyConfig, scenario: str, episodes: Iterable[Episode]) -> list[str]:
    """Once calm `scenario` has run: raise InfrastructureError (exit 3) when a listener's upstream is down for it
    (UpstreamTrouble.down: every request never answered, or answered with an error no upstream gives on purpose),
    naming each such listener, upstream and error, or when the agent answered none of its episodes
    (agent_answered_none); else the warning lines of what it showed."""
    episodes = list(episodes)
    trouble = upstream_trouble(config, scenario, episodes)
    down = [t.line() for t in trouble if t.down]
    if down:
        raise InfrastructureError("; ".join(down))
    silent = agent_answered_none(config, scenario, episodes)
    if silent is not None:
        raise InfrastructureError(silent)
    return (
        [t.line() for t in trouble]
        + nothing_through_the_proxy(config, scenario, episodes)
        + mcp_behind_paths(config, episodes)
    )


def nothing_through_the_proxy(config: FlakeproxyConfig, scenario: str, episodes: Iterable[Episode]) -> list[str]:
    """A warning when the calm scenario's episodes all answered and not one request of theirs went through the
    proxy: the agent is not pointed at its listeners (a trial's agent, its base URL at a dead port, answered
    "Sorry" and PASSed calm; only each chaos scenario's "injected nothing" hinted at why)."""
    calm = calm_episodes(config, episodes)
    calm = [e for e in calm if e.scenario == scenario]
    wire = [f"{lst.name} (http://{lst.listen})" for lst in config.proxy.listeners]
    wire += [f"the forward listener (HTTPS_PROXY=http://{config.proxy.forward})"] if config.proxy.forward else []
    if not calm or not wire or any(e.journal or e.unattributed or e.error or not _answered(e) for e in calm):
        return []
    return [
        f"warning: not one request of the calm scenario {scenario} went through the proxy ({len(calm)} episode(s), "
        f"each answered without one): if the agent calls an LLM or a tool, it is not pointed at flakeproxy, and no "
        f"fault can reach it; its base URLs must be the listeners: {', '.join(wire)}"
    ]


#: headers an MCP client sends on every request after `initialize` (streamable HTTP)
MCP_HEADERS = frozenset({"mcp-protocol-version", "mcp-session-id"})


def mcp_behind_paths(config: FlakeproxyConfig, episodes: Iterable[Episode]) -> list[str]:
    """A warning per tool target (no api, no mcp_tool) whose requests carried MCP's headers."""
    plain = {name for name, t in config.targets.items() if not t.api and not t.mcp_tool}
    found: set[str] = set()
    for entry in (entry for episode in episodes for entry in episode.journal):
        if not MCP_HEADERS.isdisjoint(str(k).lower() for k in entry.get("request_headers") or {}):
            found |= plain & set(entry.get("targets") or ())
    return [
        f"warning: target {name} is an MCP server (its requests carry MCP's headers), where initialize, the listings "
        f"and each tools/call are all requests: its faults hit the handshake as often as a tool call, and "
        f"max_tool_calls counts them all; to fault and count tool calls alone, name each tool as a target, "
        f"{{listener: {config.targets[name].listener}, mcp_tool: TOOL_NAME}}"
        for name in sorted(found)
    ]
