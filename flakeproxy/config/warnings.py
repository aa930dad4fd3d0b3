"""Warnings about a valid config that probably does not do what its author meant; each one line naming the
key path and the fix. `flakeproxy validate` and `flakeproxy contract validate` print them (exit code unchanged)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from flakeproxy.config.base import glob_matches
from flakeproxy.config.conversation import turn_count
from flakeproxy.config.model import FlakeproxyConfig
from flakeproxy.config.proxy import is_loopback_host, split_host_port
from flakeproxy.config.replica_warnings import too_few_replicas_to_pass, unread_min_pass_rate
from flakeproxy.config.turn_warnings import leaks_before_the_last_turn
from flakeproxy.config.yamlsource import format_path
from flakeproxy.faults import WS_FAULTS, MidStreamErrorFault, StreamCutFault

# an even run of backslashes (a literal backslash in the regex) before a character one escapes
_DOUBLED = re.compile(r"(?<!\\)(?:\\\\)+([dDsSwWbB$.()\[\]{}*+?|^])")
STREAM_ONLY = (StreamCutFault, MidStreamErrorFault)


def _patterns(config: FlakeproxyConfig) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every regex in the contract's invariants, with its key path."""
    for i, inv in enumerate(config.contract.invariants if config.contract else []):
        loc: tuple[str | int, ...] = ("contract", "invariants", i)
        pattern = getattr(inv, "pattern", None)
        if isinstance(pattern, str):
            yield (*loc, "pattern"), pattern
        for j, one in enumerate(getattr(inv, "patterns", None) or []):
            yield (*loc, "patterns", j), one


def doubled_backslashes(config: FlakeproxyConfig) -> list[str]:
    """Rule 1: '\\\\d' in a loaded pattern is a literal backslash then 'd', surely meant as '\\d'."""
    out = []
    for loc, pattern in _patterns(config):
        m = _DOUBLED.search(pattern)
        if m:
            single = re.sub(r"\\\\", r"\\", pattern)
            out.append(
                f"{format_path(loc)}: '{pattern}' has doubled backslashes ('{m.group()}' matches a literal "
                f"backslash, not an escaped '{m.group(1)}'), so it can never match what it seems to (negated, it "
                f"always passes); write single backslashes in single quotes: '{single}'"
            )
    return out


def _aims_at(config: FlakeproxyConfig, tool: str | None) -> list[str]:
    llm_targets = [name for name, target in config.targets.items() if target.api]
    return llm_targets if tool is None else glob_matches(tool, llm_targets)


def stream_only_faults(config: FlakeproxyConfig) -> list[str]:
    """Rule 2: a stream-only fault aimed only at targets that do not say they stream injects nothing."""
    out = []
    for i, scenario in enumerate(config.matrix):
        for fault in scenario.llm_faults:
            if not isinstance(fault, STREAM_ONLY) or (fault.match_url and fault.tool is None):
                continue
            names = _aims_at(config, fault.tool)
            if names and not any(config.targets[name].stream for name in names):
                where = format_path((*config.matrix_loc, i))
                out.append(
                    f"{where} ({scenario.name}): {fault.kind} applies only to streamed answers and no target it "
                    "aims at says stream: true; if the agent does not stream, this scenario will inject nothing "
                    f"(set stream: true on target {names[0]!r} if it does)"
                )
    return out


def websocket_only_faults(config: FlakeproxyConfig) -> list[str]:
    """Rule 2b: a WebSocket fault aimed only at targets that do not say ws: true most likely injects nothing."""
    out = []
    for i, scenario in enumerate(config.matrix):
        for section in ("tool_faults", "llm_faults"):
            for fault in getattr(scenario, section):
                if not isinstance(fault, WS_FAULTS) or (fault.match_url and fault.tool is None):
                    continue
                pool = [n for n, t in config.targets.items() if bool(t.api) == (section == "llm_faults")]
                names = pool if fault.tool is None else glob_matches(fault.tool, pool)
                if names and not any(config.targets[name].ws for name in names):
                    out.append(
                        f"{format_path((*config.matrix_loc, i))} ({scenario.name}): {fault.kind} applies only to "
                        "WebSocket connections and no target it aims at says ws: true; if the agent does not open "
                        f"a WebSocket there, this scenario will inject nothing (set ws: true on target {names[0]!r} "
                        "if it does)"
                    )
    return out


def needs_attribution(config: FlakeproxyConfig) -> bool:
    """Overlapping episodes need the agent to tell the proxy (or a mock) which episode a request is for."""
    on_the_wire = bool(config.proxy.listeners or config.proxy.forward or config.proxy.admin_url)
    mocks = any(getattr(s, "type", "") == "http_mock" for s in config.services.values())
    return config.run.concurrency > 1 and config.run.attribution == "none" and (on_the_wire or mocks)


ATTRIBUTION_FIX = {
    "none": "send no requests between episodes, or tell the proxy whose they are (run.attribution: header, trace "
    "or slots)",
    "header": "forward x-flakeproxy-cell from the agent on every LLM and tool call (run.attribution: header)",
    "trace": "propagate the traceparent the runner sends to every LLM and tool call (run.attribution: trace; "
    "OpenTelemetry instrumentation of the agent's HTTP server and clients, or propagate.inject for a client it "
    "does not patch, such as the openai SDK's own)",
    "slots": "point each slot's agent instance at its own slot's listeners only (run.attribution: slots)",
}


def attribution_fix(config: FlakeproxyConfig) -> str:
    """How the agent's requests become attributable, for the run's attribution mode (one clause)."""
    return ATTRIBUTION_FIX[config.run.attribution]


def shared_state(config: FlakeproxyConfig) -> list[str]:
    """Invariants that read the workspace or a service: overlapping episodes would share what they read."""
    return [i.id for i in (config.contract.invariants if config.contract else []) if i.reads_state]


def unattributed_concurrency(config: FlakeproxyConfig) -> list[str]:
    state = shared_state(config)
    if config.run.concurrency > 1 and state and not needs_attribution(config):
        return [
            f"run.concurrency {config.run.concurrency} ignored: {', '.join(state)} read(s) the workspace or a "
            "service, which overlapping episodes would share; episodes run one at a time"
        ]
    if not needs_attribution(config):
        return []
    return [
        f"run.concurrency {config.run.concurrency} ignored: episodes run one at a time, because the proxy cannot "
        "tell overlapping episodes' requests apart; set run.attribution: trace (the agent propagates the W3C "
        "traceparent, e.g. with OpenTelemetry), header (it forwards x-flakeproxy-cell) or slots (one agent "
        "instance per slot of listeners, proxy.slots)"
    ]


def forward_proxy(config: FlakeproxyConfig) -> list[str]:
    """Upstream verification switched off, and faults the forward listener's pass-through can never reach."""
    out = []
    if config.proxy.insecure_skip_upstream_verify:
        out.append(
            "proxy.insecure_skip_upstream_verify: upstream certificates are not checked; use it for test "
            "upstreams only (a private CA belongs in proxy.upstream_ca)"
        )
    forward_hosts = [t for t in config.targets.values() if t.listener == "forward"]
    if config.proxy.forward and config.proxy.intercept == "targets":
        for i, scenario in enumerate(config.matrix):
            for fault in [*scenario.tool_faults, *scenario.llm_faults, *scenario.context_attacks]:
                if fault.match_url and fault.tool is None and fault.match_url.startswith("https") and not forward_hosts:
                    where = format_path((*config.matrix_loc, i))
                    out.append(
                        f"{where} ({scenario.name}): match_url {fault.match_url} aims at HTTPS through the forward "
                        "listener, which tunnels hosts no target names (intercept: targets); name the host in a "
                        "target or set proxy.intercept: all"
                    )
    return out


def forward_without_token(config: FlakeproxyConfig) -> list[str]:
    """A forward listener anyone on the network can reach, beside a control API that asks for no token."""
    forward = config.proxy.forward
    if forward is None or config.proxy.token or is_loopback_host(split_host_port(forward)[0]):
        return []
    return [
        f"proxy.forward {forward} listens beyond loopback and proxy.token is not set: the forward listener never "
        f"relays to the control API, but anything on this host can reach it ({config.proxy.admin}) and control the "
        "run; set proxy.token (e.g. token: ${FLAKEPROXY_TOKEN})"
    ]


def slot_concurrency(config: FlakeproxyConfig) -> list[str]:
    """With slots, as many episodes run at once as there are slots, whatever run.concurrency says."""
    slots = config.proxy.slots
    if config.run.attribution == "slots" and config.run.concurrency not in (1, slots) and not shared_state(config):
        return [
            f"run.concurrency {config.run.concurrency} ignored: with run.attribution: slots, one episode runs per "
            f"slot ({slots} at once, proxy.slots)"
        ]
    return []


def unused_slots(config: FlakeproxyConfig) -> list[str]:
    """Slots of listeners a run will not use: the runner ties requests to episodes by slot only with attribution:
    slots (a sidecar's own config, without an agent, may list slots for a runner elsewhere)."""
    if config.agent is not None and config.proxy.slots and config.run.attribution != "slots":
        return [
            f"proxy.slots {config.proxy.slots}: the slot listeners are opened, but run.attribution is "
            f"{config.run.attribution}, so no episode runs on a slot; set run.attribution: slots or drop proxy.slots"
        ]
    return []


def unreachable_turns(config: FlakeproxyConfig) -> list[str]:
    """A fault limited to turns no golden prompt or probe has never fires (a one-turn prompt is turn 1)."""
    prompts = [
        *config.golden_prompts,
        *(p for i in (config.contract.invariants if config.contract else []) for p in i.probes or []),
    ]
    longest = max((turn_count(p) for p in prompts), default=1)
    out = []
    for i, scenario in enumerate(config.matrix):
        for section in ("tool_faults", "llm_faults", "context_attacks"):
            for j, fault in enumerate(getattr(scenario, section)):
                if fault.turns and min(fault.turns) > longest:
                    out.append(
                        f"{format_path((*config.matrix_loc, i, section, j, 'turns'))}: {fault.turns}, but the longest "
                        f"prompt has {longest} turn(s), so it never fires; use turns from 1 to {longest}, or make a "
                        "golden prompt a conversation (a list of turns)"
                    )
    return out


def shared_reset(config: FlakeproxyConfig) -> list[str]:
    """Episodes at once, conversations, and a reset of the whole agent: each episode's reset wipes the sessions
    of the conversations running beside it (found by a new user: turn 3 lost its history at concurrency 4)."""
    agent = config.agent
    reset = getattr(agent, "reset_endpoint", None)
    conversations = any(not isinstance(p, str) for p in config.golden_prompts)
    if config.run.concurrency > 1 and conversations and reset and "{session}" not in reset:
        return [
            f"agent.reset_endpoint {reset} resets the whole agent, and with run.concurrency "
            f"{config.run.concurrency} it runs while other conversations are mid-way: put {{session}} in it "
            "(e.g. /reset/{session}) so an episode clears its own session only, or run.concurrency: 1"
        ]
    return []


_PLACEHOLDER = re.compile(r"\{([A-Za-z_]+)\}")


def _template_strings(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str, bool]]:
    """(path, text, inside a list) of every string in a request_template."""
    if isinstance(value, str):
        yield path, value, False
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _template_strings(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from ((p, t, True) for p, t, _ in _template_strings(item, (*path, i)))


def http_placeholders(config: FlakeproxyConfig) -> list[str]:
    """A placeholder an http agent's field does not fill is sent as it is: {sesion} for {session}, {messages} in
    the endpoint or inside a list (found by a new user, all silently sent literally)."""
    agent: Any = config.agent  # an http agent (adapter types are told apart by `type`, not isinstance)
    if getattr(agent, "type", None) != "http":
        return []
    fields: list[tuple[tuple[str | int, ...], str, set[str]]] = [
        (("agent", "endpoint"), agent.endpoint, {"session"}),
        (("agent", "reset_endpoint"), agent.reset_endpoint or "", {"session"}),
        *((("agent", "headers", k), v, {"session"}) for k, v in agent.headers.items()),
    ]
    for path, text, listed in _template_strings(agent.request_template, ("agent", "request_template")):
        fields.append((path, text, {"prompt", "session"} if listed or text != "{messages}" else {"messages"}))
    out = []
    for path, text, filled in fields:
        for name in _PLACEHOLDER.findall(text):
            if name not in filled:
                out.append(
                    f"{format_path(path)}: {{{name}}} is sent as it is (not filled here); "
                    f"{', '.join('{' + f + '}' for f in sorted(filled))} is filled there"
                    + (
                        '; {messages} goes as a whole value of the template, e.g. {messages: "{messages}"}'
                        if name == "messages"
                        else ""
                    )
                )
    return out


def never_firing(config: FlakeproxyConfig) -> list[str]:
    """A fault with probability 0 never fires: its scenario can only inject nothing (a trial's validate was
    silent on one, and the run then said more replicas might make it fire)."""
    return [
        f"{format_path((*config.matrix_loc, i, section, j, 'probability'))}: 0, so it never fires and scenario "
        f"{scenario.name} gets nothing from it; give it a probability above 0, or remove it"
        for i, scenario in enumerate(config.matrix)
        for section in ("tool_faults", "llm_faults", "context_attacks")
        for j, fault in enumerate(getattr(scenario, section))
        if fault.probability == 0
    ]


def config_warnings(config: FlakeproxyConfig) -> list[str]:
    """Every warning for config, one line each, in a stable order."""
    return (
        doubled_backslashes(config)
        + stream_only_faults(config)
        + websocket_only_faults(config)
        + unattributed_concurrency(config)
        + slot_concurrency(config)
        + unused_slots(config)
        + unreachable_turns(config)
        + never_firing(config)
        + leaks_before_the_last_turn(config)
        + shared_reset(config)
        + http_placeholders(config)
        + forward_proxy(config)
        + forward_without_token(config)
        + unread_min_pass_rate(config.run, config.scoring)
        + too_few_replicas_to_pass(config.run, config.scoring)
    )
