"""Fault coverage: per scenario, each fault decided vs applied (changed what the agent received)."""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from flakeproxy.config import FlakeproxyConfig, Scenario
from flakeproxy.faults import LLM_ATTACKS, Fault
from flakeproxy.results import Episode, FaultCoverage, ScenarioCoverage
from flakeproxy.wire.coverage import not_the_targets
from flakeproxy.wire.mcp import called_tool
from flakeproxy.wire.record import FaultRecord, read_fault


def _sections(scenario: Scenario) -> list[tuple[str, Sequence[Fault]]]:
    return [
        ("tool_faults", scenario.tool_faults),
        ("llm_faults", scenario.llm_faults),
        ("context_attacks", scenario.context_attacks),
    ]


def _declared(scenario: Scenario) -> dict[tuple[str, int], FaultCoverage]:
    return {
        (section, i): FaultCoverage(section=section, index=i, kind=fault.kind)
        for section, faults in _sections(scenario)
        for i, fault in enumerate(faults)
    }


def _aimed_at(config: FlakeproxyConfig, scenario: Scenario) -> set[str] | None:
    """The targets the scenario's faults can fire on, as the proxy matches them (`tool:` among the targets of
    their side, an LLM fault without one on every `api:` target); None when a fault names requests by URL alone."""
    names: set[str] = set()
    for section, faults in _sections(scenario):
        for fault in faults:
            llm = section == "llm_faults" or isinstance(fault, LLM_ATTACKS)
            side = [name for name, target in config.targets.items() if bool(target.api) == llm]
            if fault.tool:
                names |= {name for name in side if fnmatch.fnmatchcase(name, fault.tool)}
            elif fault.match_url:
                return None
            elif llm:
                names |= set(side)
    return names


@dataclass(frozen=True)
class Uncalled:
    """Targets a scenario's faults aim at that its episodes made no request to, and where the agent should have sent
    them: each listener's name and address (`forward`: the forward listener)."""

    targets: tuple[str, ...]
    listeners: tuple[tuple[str, str], ...]

    def detail(self) -> str:
        """Why nothing was decided: the agent never called them through the proxy, and the fix when it called them
        directly (its URL still the real upstream's), the one cause a config change on the agent's side mends."""
        via = " or ".join(f"{_listener(name)} at {where}" for name, where in self.listeners)
        return (
            f"its episodes made no request to {', '.join(self.targets)}: the agent never called it through {via} "
            "(it answered without it, hung, or failed before it: see their answers and journals; or it called it "
            f"directly, not through the proxy: {'; '.join(_point(name, where) for name, where in self.listeners)})"
        )


def _listener(name: str) -> str:
    return "the forward listener" if name == "forward" else f"listener {name}"


def _point(name: str, where: str) -> str:
    """How the agent's calls go through a listener: its URL for the tool, or its proxy setting for the forward one."""
    if name == "forward":
        return f"its HTTP(S)_PROXY must be the forward listener, http://{where}"
    return f"its URL for it must point at {_listener(name)}, http://{where}"


def never_called(config: FlakeproxyConfig, scenario: Scenario, episodes: Sequence[Episode]) -> Uncalled | None:
    """The targets the scenario's faults aim at, when its episodes made no request at all on their listeners: the
    agent never called them through the proxy (it answered without them, hung, or failed before: its LLM down,
    say; or it called them directly), which no change of targets would fix. None when they made one, or a fault
    names requests by URL alone."""
    aimed = _aimed_at(config, scenario)
    if not aimed:
        return None
    listeners = sorted({config.targets[name].listener for name in aimed})
    mine = [e for e in episodes if e.scenario == scenario.name and e.purpose == "matrix"]
    if any(entry.get("listener") in listeners for e in mine for entry in e.journal):
        return None
    addresses = {lst.name: lst.listen for lst in config.proxy.listeners} | {"forward": config.proxy.forward or "?"}
    return Uncalled(tuple(sorted(aimed)), tuple((name, str(addresses.get(name, "?"))) for name in listeners))


@dataclass(frozen=True)
class OtherTools:
    """MCP tool targets no request matched, while the agent called other tools on their listeners (a trial's
    `mcp_tool: get_qoute` was told only "check targets")."""

    targets: tuple[tuple[str, str], ...]  # (target, its mcp_tool)
    called: tuple[str, ...]

    def detail(self) -> str:
        aimed = ", ".join(f"{name} (mcp_tool: {tool})" for name, tool in self.targets)
        return (
            f"no MCP call of its episodes was to {aimed}; the agent called {', '.join(self.called)} there: is the "
            "mcp_tool name misspelled?"
        )


def other_tools(config: FlakeproxyConfig, scenario: Scenario, episodes: Sequence[Episode]) -> OtherTools | None:
    """When every target the scenario aims at is one MCP tool, none was called, and others were on their
    listeners: which were."""
    aimed = _aimed_at(config, scenario)
    if not aimed or not all(config.targets[name].mcp_tool for name in aimed):
        return None
    listeners = {config.targets[name].listener for name in aimed}
    mine = [e for e in episodes if e.scenario == scenario.name and e.purpose == "matrix"]
    entries = [entry for e in mine for entry in e.journal if entry.get("listener") in listeners]
    if any(name in (entry.get("targets") or []) for entry in entries for name in aimed):
        return None
    called = sorted({name for entry in entries if (name := _tool_of(entry)) is not None})
    if not called:
        return None
    tools = tuple((name, str(config.targets[name].mcp_tool)) for name in sorted(aimed))
    return OtherTools(tools, tuple(called))


def _tool_of(entry: dict[str, Any]) -> str | None:
    """The MCP tool a journaled request called, as the proxy reads one (wire.mcp.called_tool)."""
    headers = {str(k).lower(): str(v) for k, v in (entry.get("request_headers") or {}).items()}
    return called_tool(headers, str(entry.get("request_body") or "").encode())


def _count(row: FaultCoverage, record: FaultRecord) -> None:
    row.decided += 1
    if not record.applied:
        if record.not_applied_reason and record.not_applied_reason not in row.not_applied_reasons:
            row.not_applied_reasons.append(record.not_applied_reason)
        return
    row.applied += 1
    if record.turn is not None:
        row.applied_turns[record.turn] = row.applied_turns.get(record.turn, 0) + 1
    if not record.context_attack:
        return
    row.reached_model = (row.reached_model or 0) + (record.reached_model is True)
    if record.reached_model is not True and record.model_evidence not in (None, *row.not_delivered_reasons):
        row.not_delivered_reasons.append(str(record.model_evidence))


def _on_turn_1(row: FaultCoverage, n: int) -> None:
    """A one-turn prompt's only turn is turn 1 (the proxy fires a `turns: [1]` fault on it): where the fault also
    applied on conversations' turns, its n applications on one-turn prompts count on turn 1, so the turn counts
    add up with `applied`. A fault that applied on one-turn prompts alone keeps no turn counts, as before."""
    if n and row.applied_turns:
        row.applied_turns = dict(sorted({**row.applied_turns, 1: row.applied_turns.get(1, 0) + n}.items()))


def count_coverage(
    name: str,
    episodes: list[Episode],
    declared: dict[tuple[str, int], FaultCoverage] | None,
    loose: Sequence[FaultRecord] = (),
    chaos: bool | None = None,
) -> ScenarioCoverage:
    """Decided, applied and (context attacks) reached-the-model counts over a scenario's episodes and the loose
    records of it (requests no episode could be tied to). `declared`: the scenario's faults (None: count
    whatever was decided, for a result read without its config)."""
    rows = dict(declared) if declared is not None else {}
    one_turn: Counter[tuple[str, int]] = Counter()  # applied on one-turn prompts (their records carry no turn)
    for record, turns in [(r, e.turns) for e in episodes for r in e.faults(applied=None)] + [(r, []) for r in loose]:
        key = (record.section, record.index)
        if declared is None and key not in rows:
            rows[key] = FaultCoverage(section=record.section, index=record.index, kind=record.kind)
        if key in rows:
            _count(rows[key], record)
            one_turn[key] += record.applied and record.turn is None and turns is None
    for where, n in one_turn.items():
        _on_turn_1(rows[where], n)
    listed = list(rows.values())
    reached = [f.reached_model for f in listed if f.reached_model is not None]
    return ScenarioCoverage(
        scenario=name,
        chaos=bool(listed) if chaos is None else chaos,
        episodes=len(episodes),
        decided=sum(f.decided for f in listed),
        applied=sum(f.applied for f in listed),
        reached_model=sum(reached) if reached else None,
        unattributed=sum(e.unattributed for e in episodes),
        faults=listed,
    )


def scenario_coverage(
    scenario: Scenario, episodes: list[Episode], unattributed: Sequence[dict[str, Any]] = ()
) -> ScenarioCoverage:
    """Decided vs applied over the scenario's episodes and the requests of it no episode could be tied to
    (a fault is recorded with the scenario it was decided in)."""
    mine = [e for e in episodes if e.scenario == scenario.name and e.purpose == "matrix"]
    loose = [r for r in (read_fault(u.get("fault")) for u in unattributed) if r and r.scenario == scenario.name]
    return count_coverage(scenario.name, mine, _declared(scenario), loose, scenario.any_chaos_active)


def coverage(
    config: FlakeproxyConfig, episodes: list[Episode], unattributed: Sequence[dict[str, Any]] = ()
) -> list[ScenarioCoverage]:
    return [scenario_coverage(s, episodes, unattributed) for s in config.matrix]


class Cause(Protocol):
    """Why a scenario's faults decided nothing, as its journals show it (Uncalled, unreached.Unreached)."""

    def detail(self) -> str: ...


def describe(
    cov: ScenarioCoverage, fix: str = "forward x-flakeproxy-cell", undecided: Cause | None = None
) -> str | None:
    """A warning line for a chaos scenario that injected nothing, or one of whose faults never applied (`fix`:
    how the agent's requests become attributable, when some were not; `undecided`: unreached.undecided's)."""
    if not cov.chaos or not cov.episodes:
        return None
    if cov.applied == 0 and cov.unattributed:
        return (
            f"warning: scenario {cov.scenario}: its episodes' requests could not be attributed "
            f"({cov.unattributed}), so whether its faults reached the agent is unknown; {fix}"
        )
    if cov.applied == 0:
        head = f"warning: scenario {cov.scenario} injected nothing in {cov.episodes} episode(s) (decided {cov.decided}"
        if not cov.decided and undecided is not None:
            return f"{head}, applied 0): {undecided.detail()}"
        reasons = sorted({r for f in cov.faults for r in f.not_applied_reasons})
        detail = (
            f": {'; '.join(reasons)}" if reasons else (": no request matched its faults" if not cov.decided else "")
        )
        upstream = bool(reasons) and all(not_the_targets(r) for r in reasons)  # no target would have changed it
        return f"{head}, applied 0){detail}" + ("" if upstream else "; check targets")
    idle = [f"{f.section}[{f.index}] {f.kind}" for f in cov.faults if f.applied == 0]
    if idle:
        return f"warning: scenario {cov.scenario}: {', '.join(idle)} never applied (the others did)"
    unread = [f for f in cov.faults if f.applied and f.reached_model == 0]
    if unread:
        first = unread[0]
        why = f": {first.not_delivered_reasons[0]}" if first.not_delivered_reasons else ""
        return (
            f"warning: scenario {cov.scenario}: {first.section}[{first.index}] {first.kind} reached the agent "
            f"{first.applied} time(s) but never its model{why}; checks that need it are n/a"
        )
    return None
