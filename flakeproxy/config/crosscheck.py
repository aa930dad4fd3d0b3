"""Checks that span sections: names that must refer to something, names that must be unique."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from flakeproxy.config.base import glob_matches, is_glob
from flakeproxy.config.conversation import turn_count
from flakeproxy.config.settings import HttpMockService, SqlService
from flakeproxy.faults import LLM_ATTACKS, MCP_ONLY, Fault

if TYPE_CHECKING:  # the proxy validates a WireConfig: it imports no invariant (issue 23)
    from flakeproxy.config.model import FlakeproxyConfig
    from flakeproxy.config.wire_config import WireConfig
    from flakeproxy.invariants.base import Invariant

Loc = tuple[str | int, ...]


class CrossCheckError(ValueError):
    """A cross-section problem, with the key path it belongs to (pydantic only knows the root)."""

    def __init__(self, loc: Loc, message: str, value: Any = None) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message
        self.value = value


def _choices(names: list[str]) -> str:
    return ", ".join(names) if names else "(none defined)"


def _unique(items: list[str], loc_of: Any, what: str) -> None:
    seen: set[str] = set()
    for i, name in enumerate(items):
        if name in seen:
            raise CrossCheckError(loc_of(i), f"duplicate {what} {name!r}; each {what} must be unique", name)
        seen.add(name)


def _check_targets(config: WireConfig) -> None:
    listeners = [listener.name for listener in config.proxy.listeners]
    listeners += ["forward"] if config.proxy.forward else []
    for name, target in config.targets.items():
        if target.listener == "forward" and not config.proxy.forward:  # a trial's runner config for a sidecar
            raise CrossCheckError(
                ("targets", name, "listener"),
                "listener 'forward' is the forward listener, and proxy.forward is not set: set it to its address "
                "(e.g. proxy.forward: 127.0.0.1:8700; a sidecar's runner config too, with the sidecar's)",
                target.listener,
            )
        if target.listener not in listeners:
            raise CrossCheckError(
                ("targets", name, "listener"),
                f"listener {target.listener!r} is not in proxy.listeners; valid: {_choices(listeners)}",
                target.listener,
            )


def _selected(config: WireConfig, fault: Fault, loc: Loc, names: list[str]) -> list[str]:
    """The target names fault.tool selects, or an error naming the valid ones."""
    assert fault.tool is not None
    agent = config.agent
    if agent is not None and agent.tool_names_at_run_time and not is_glob(fault.tool):
        return []  # names live in the registry, known only at run time
    chosen = glob_matches(fault.tool, names)
    if not chosen:
        kind = "glob matches no" if is_glob(fault.tool) else "is not one of the"
        raise CrossCheckError(
            (*loc, "tool"), f"tool {fault.tool!r} {kind} targets; valid: {_choices(names)}", fault.tool
        )
    return chosen


def _check_fault(config: WireConfig, fault: Fault, loc: Loc, llm_side: bool) -> None:
    llm_targets = [n for n, t in config.targets.items() if t.api]
    agent = config.agent
    tool_names = [n for n, t in config.targets.items() if not t.api]
    tool_names += agent.tool_names if agent is not None else []
    if fault.tool is None and fault.match_url is None:
        if not llm_side:
            raise CrossCheckError(loc, f"{fault.kind} needs tool: (a target name or glob) or match_url:")
        if not llm_targets:
            raise CrossCheckError(
                loc,
                f"{fault.kind} needs a target with api: to aim at; add one, e.g. "
                "targets: {llm: {listener: llm, api: openai}}",
            )
    if fault.tool is None:
        return
    other = tool_names if llm_side else llm_targets
    if fault.tool in other and not is_glob(fault.tool):  # the target exists, in the other section's kind
        section, has = ("tool_faults", "has no api:") if llm_side else ("llm_faults", "has api:")
        raise CrossCheckError(
            (*loc, "tool"),
            f"target {fault.tool!r} {has}, so its faults go under {section}; move this fault there"
            + (", or add api: to the target" if llm_side else ", or drop api: from the target"),
            fault.tool,
        )
    chosen = _selected(config, fault, loc, llm_targets if llm_side else tool_names)
    if isinstance(fault, MCP_ONLY):
        for name in chosen:
            if name in config.targets and not config.targets[name].mcp_tool:
                raise CrossCheckError(
                    (*loc, "tool"),
                    f"{fault.kind} applies to MCP tools only, and target {name!r} has no mcp_tool:",
                    fault.tool,
                )


def _check_matrix(config: WireConfig) -> None:
    if config.chaos_matrix is not None and config.contract and config.contract.chaos_matrix is not None:
        raise CrossCheckError(
            ("contract", "chaos_matrix"),
            "chaos_matrix is given twice (top level and under contract); keep one",
        )
    base = config.matrix_loc
    _unique([s.name for s in config.matrix], lambda i: (*base, i, "name"), "scenario name")
    agent = config.agent
    on_the_wire = [n for n, t in config.targets.items() if not t.api]  # tool targets the proxy breaks

    def wrapped(fault: Fault) -> bool:
        """Whether a tool fault needs the agent's tools wrapped: it aims at no tool target on the wire (a python
        agent whose tool calls an HTTP API through a listener needs no wrapping: a trial's was refused)."""
        if fault.match_url:
            return False
        return not (on_the_wire and glob_matches(fault.tool or "*", on_the_wire))

    uses_tool_faults = any(
        any(wrapped(f) for f in s.tool_faults)
        or any(not isinstance(a, LLM_ATTACKS) and wrapped(a) for a in s.context_attacks)
        for s in config.matrix
    )
    problem = agent.tool_faults_problem() if agent is not None else None
    if uses_tool_faults and problem:
        raise CrossCheckError(("agent",), problem)
    for i, scenario in enumerate(config.matrix):
        for j, tool_fault in enumerate(scenario.tool_faults):
            _check_fault(config, tool_fault, (*base, i, "tool_faults", j), llm_side=False)
        for j, llm_fault in enumerate(scenario.llm_faults):
            _check_fault(config, llm_fault, (*base, i, "llm_faults", j), llm_side=True)
        for j, attack in enumerate(scenario.context_attacks):
            _check_fault(config, attack, (*base, i, "context_attacks", j), llm_side=isinstance(attack, LLM_ATTACKS))


def _check_invariants(config: FlakeproxyConfig) -> None:
    if config.contract:
        _check_invariant_list(config, config.contract.invariants, ("contract", "invariants"))
    if config.invariants:
        _check_invariant_list(config, config.invariants, ("invariants",))


def _check_chaos(config: FlakeproxyConfig) -> None:
    """The faults written under the top-level chaos: (a profile's aim at every tool with '*' and are not checked)."""
    chaos = config.chaos
    if chaos is None:
        return
    if not config.invariants:
        raise CrossCheckError(("chaos",), "the chaos pillar is judged by top-level invariants:; add some")
    for j, tool_fault in enumerate(chaos.tool_faults):
        _check_fault(config, tool_fault, ("chaos", "tool_faults", j), llm_side=False)
    for j, llm_fault in enumerate(chaos.llm_faults):
        _check_fault(config, llm_fault, ("chaos", "llm_faults", j), llm_side=True)
    for j, attack in enumerate(chaos.context_attacks):
        _check_fault(config, attack, ("chaos", "context_attacks", j), llm_side=isinstance(attack, LLM_ATTACKS))


def _check_invariant_list(config: FlakeproxyConfig, invariants: Sequence[Invariant], base: Loc) -> None:
    _unique([inv.id for inv in invariants], lambda i: (*base, i, "id"), "invariant id")
    targets = list(config.targets)
    agent = config.agent
    registry = agent is not None and agent.tool_names_at_run_time
    targets += agent.tool_names if agent is not None else []  # an agent's wrapped tools are targets too
    sql = [n for n, s in config.services.items() if isinstance(s, SqlService)]
    mocks = [n for n, s in config.services.items() if isinstance(s, HttpMockService)]
    for i, inv in enumerate(invariants):
        loc: Loc = (*base, i)
        target = getattr(inv, "target", None)
        if target is not None and target not in targets and not registry:  # registry names: known at run time
            raise CrossCheckError((*loc, "target"), f"target {target!r} is not defined; valid: {_choices(targets)}")
        for name in getattr(inv, "targets", None) or []:
            if not glob_matches(name, targets) and not registry:
                raise CrossCheckError((*loc, "targets"), f"{name!r} matches no target; valid: {_choices(targets)}")
        service = getattr(inv, "service", None)
        sql_check = getattr(inv, "type", "") == "sql"
        valid = sql if sql_check else targets + mocks
        if service is not None and service not in valid:
            kinds = "postgres/mysql services" if sql_check else "targets or http_mock services"
            raise CrossCheckError(
                (*loc, "service"), f"service {service!r} is not one of the {kinds}; valid: {_choices(valid)}"
            )
        if inv.reads_spans and config.proxy.otlp is None:
            raise CrossCheckError(
                (*loc, "type"), f"{inv.id} judges the agent's own spans: set proxy.otlp, e.g. 127.0.0.1:4318"
            )
        if getattr(inv, "type", "") == "llm_as_judge" and not (getattr(inv, "base_url", None) or config.judge):
            raise CrossCheckError(loc, "llm_as_judge needs base_url: here or a judge: {base_url: ...} section")
        _check_turn(config, inv, loc)
        if base == ("contract", "invariants"):  # the top-level ones also judge the chaos profiles' scenarios
            names = [s.name for s in config.matrix]
            for pattern in inv.scenarios or []:
                if not glob_matches(pattern, names):
                    why = f"{pattern!r} matches no scenario of chaos_matrix; valid: {_choices(names)}"
                    raise CrossCheckError((*loc, "scenarios"), why)


def _check_turn(config: FlakeproxyConfig, inv: Invariant, loc: Loc) -> None:
    """A numbered turn: some prompt the invariant judges must have it."""
    if not isinstance(inv.turn, int):
        return
    prompts = inv.probes or config.golden_prompts
    longest = max((turn_count(p) for p in prompts), default=0)
    if prompts and inv.turn > longest:
        raise CrossCheckError(
            (*loc, "turn"),
            f"turn {inv.turn}, but the longest prompt it judges has {longest} turn(s); use 1 to {longest}, "
            "last, all, any or conversation",
        )


def _check_slots(config: WireConfig) -> None:
    """attribution: slots needs slots of listeners, and an http agent one replica per slot."""
    slots, agent = config.proxy.slots, config.agent
    if config.run.attribution == "slots" and slots < 1:
        raise CrossCheckError(
            ("run", "attribution"),
            "slots needs proxy.slots (how many listener sets, one per agent instance), e.g. proxy: {slots: 4}",
            "slots",
        )
    http_slots = getattr(agent, "slots", None) if agent is not None else None
    if http_slots is not None and config.run.attribution != "slots":
        raise CrossCheckError(("agent", "slots"), "is set but run.attribution is not slots; set run.attribution: slots")
    if http_slots is not None and len(http_slots) != slots:
        raise CrossCheckError(
            ("agent", "slots"),
            f"lists {len(http_slots)} replica(s) and proxy.slots is {slots}; give one endpoint per slot",
        )
    if config.run.attribution == "slots" and agent is not None and agent.type == "http" and http_slots is None:
        raise CrossCheckError(
            ("agent", "slots"),
            "missing: with run.attribution: slots an http agent lists one replica per slot, "
            "e.g. slots: [{endpoint: http://127.0.0.1:8001/chat}, {endpoint: http://127.0.0.1:8002/chat}]",
        )


URL_PLACEHOLDER = re.compile(r"\{url:([^}]*)\}")


def _check_url_placeholders(config: WireConfig) -> None:
    """{url:NAME} in a command agent's command, env, cwd or reset_command names a listener (else it would reach
    the agent as the literal text, and its calls would go nowhere)."""
    agent = config.agent
    if agent is None or agent.type != "command":
        return
    places: list[tuple[Loc, str]] = [(("agent", "command", i), a) for i, a in enumerate(agent.command)]
    places += [(("agent", "env", k), v) for k, v in agent.env.items()]
    places += [(("agent", "reset_command", i), a) for i, a in enumerate(agent.reset_command or [])]
    places += [(("agent", "cwd"), agent.cwd)] if agent.cwd else []
    listeners = [listener.name for listener in config.proxy.listeners]
    for loc, text in places:
        for name in URL_PLACEHOLDER.findall(text):
            if name not in listeners:
                raise CrossCheckError(
                    loc, f"{{url:{name}}} names no listener; valid: {_choices(listeners)}", f"{{url:{name}}}"
                )


def wire_cross_check(config: WireConfig) -> None:
    """The proxy's part (its listeners, slots, targets and faults): raise CrossCheckError for the first problem."""
    _check_slots(config)
    _check_url_placeholders(config)
    _check_targets(config)
    _check_matrix(config)


def cross_check(config: FlakeproxyConfig) -> None:
    """Raise CrossCheckError for the first cross-section problem found."""
    wire_cross_check(config)
    _check_invariants(config)
    _check_chaos(config)
    if config.mutations is not None and not config.invariants:
        raise CrossCheckError(("mutations",), "the mutation pillar is judged by top-level invariants:; add some")
