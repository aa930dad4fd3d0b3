"""Fault coverage: per scenario, each fault decided vs applied (changed what the agent received)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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


def scenario_coverage(
    scenario: Scenario, episodes: list[Episode], unattributed: Sequence[dict[str, Any]] = ()
) -> ScenarioCoverage:
    """Decided vs applied over the scenario's episodes and the requests of it no episode could be tied to
    (a fault is recorded with the scenario it was decided in)."""
    mine = [e for e in episodes if e.scenario == scenario.name and e.purpose == "matrix"]
    faults = {(f.section, f.index): f for f in _declared(scenario)}
    loose = [r["fault"] for r in unattributed if (r.get("fault") or {}).get("scenario") == scenario.name]
    records = [r for e in mine for r in e.faults(applied=None)] + loose
    for record in records:
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
        unattributed=sum(e.unattributed for e in mine),
        faults=listed,
    )


def coverage(
    config: FlakeproxyConfig, episodes: list[Episode], unattributed: Sequence[dict[str, Any]] = ()
) -> list[ScenarioCoverage]:
    return [scenario_coverage(s, episodes, unattributed) for s in config.matrix]


def describe(cov: ScenarioCoverage, fix: str = "forward x-flakeproxy-cell") -> str | None:
    """A warning line for a chaos scenario that injected nothing, or one of whose faults never applied (`fix`:
    how the agent's requests become attributable, when some were not)."""
    if not cov.chaos or not cov.episodes:
        return None
    if cov.applied == 0 and cov.unattributed:
        return (
            f"warning: scenario {cov.scenario}: its episodes' requests could not be attributed "
            f"({cov.unattributed}), so whether its faults reached the agent is unknown; {fix}"
        )
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
