"""Fault coverage: per scenario, each fault decided vs applied (changed what the agent received)."""

from __future__ import annotations

from collections.abc import Sequence

from flakeproxy.config import FlakeproxyConfig, Scenario
from flakeproxy.faults import Fault
from flakeproxy.results import Episode, FaultCoverage, ScenarioCoverage


def _declared(scenario: Scenario) -> list[FaultCoverage]:
    sections: list[tuple[str, Sequence[Fault]]] = [
        ("tool_faults", scenario.tool_faults),
        ("llm_faults", scenario.llm_faults),
        ("context_attacks", scenario.context_attacks),
    ]
    return [
        FaultCoverage(section=section, index=i, kind=fault.kind)
        for section, faults in sections
        for i, fault in enumerate(faults)
    ]


def scenario_coverage(scenario: Scenario, episodes: list[Episode]) -> ScenarioCoverage:
    mine = [e for e in episodes if e.scenario == scenario.name and e.purpose == "matrix"]
    faults = {(f.section, f.index): f for f in _declared(scenario)}
    for record in (r for e in mine for r in e.faults(applied=None)):
        fault = faults.get((record.get("section", ""), record.get("index", -1)))
        if fault is None:
            continue
        fault.decided += 1
        if record.get("applied", True):
            fault.applied += 1
        elif record.get("not_applied_reason") and record["not_applied_reason"] not in fault.not_applied_reasons:
            fault.not_applied_reasons.append(record["not_applied_reason"])
    listed = list(faults.values())
    return ScenarioCoverage(
        scenario=scenario.name,
        chaos=scenario.any_chaos_active,
        episodes=len(mine),
        decided=sum(f.decided for f in listed),
        applied=sum(f.applied for f in listed),
        faults=listed,
    )


def coverage(config: FlakeproxyConfig, episodes: list[Episode]) -> list[ScenarioCoverage]:
    return [scenario_coverage(s, episodes) for s in config.matrix]


def describe(cov: ScenarioCoverage) -> str | None:
    """A warning line for a chaos scenario that injected nothing, or one of whose faults never applied."""
    if not cov.chaos or not cov.episodes:
        return None
    if cov.applied == 0:
        reasons = sorted({r for f in cov.faults for r in f.not_applied_reasons})
        detail = (
            f": {'; '.join(reasons)}" if reasons else (": no request matched its faults" if not cov.decided else "")
        )
        return (
            f"warning: scenario {cov.scenario} injected nothing in {cov.episodes} episode(s) "
            f"(decided {cov.decided}, applied 0){detail}; check targets"
        )
    idle = [f"{f.section}[{f.index}] {f.kind}" for f in cov.faults if f.applied == 0]
    if idle:
        return f"warning: scenario {cov.scenario}: {', '.join(idle)} never applied (the others did)"
    return None
