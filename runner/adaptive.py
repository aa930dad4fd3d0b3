"""Adaptive replicas in a run (`run.replicas: {min, max}`): every cell gets `min` replicas; then, round by round,
only the episodes some still-open cell needs are run, and the scenarios they belong to are judged again.

The plan is the one for `max` replicas, so an episode keeps the id, label and fault seed it has in a fixed run
of `max` replicas. A round gives each open cell the replicas it needs before its next look (stats_sequential):
the next replicas of the (scenario, prompt) pairs it judges, with the calm episodes they are compared with
(`baseline: auto`). An episode serves every cell that judges it, so a settled cell of the same scenario sees
it too; its verdict does not change (the first look that settles a cell decides it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.judging.adaptive import design_of, open_cells
from flakeproxy.judging.stats_sequential import AdaptiveDesign
from flakeproxy.planning.plan import Plan, prompts_of
from flakeproxy.results import CellResult, Episode

if TYPE_CHECKING:
    from flakeproxy.runner.engine import ContractRun
    from flakeproxy.runner.episodes import EpisodeRunner

Key = tuple[str | None, str, str | None]  # scenario, prompt, invariant (run.isolation: cell)


def _key(episode: Episode) -> Key:
    return episode.scenario, episode.prompt, episode.invariant


def replicas_run(done: Mapping[str, Episode]) -> dict[Key, int]:
    """How many replicas each (scenario, prompt) has run so far: they run in order, 0, 1, 2, ..."""
    out: dict[Key, int] = {}
    for episode in done.values():
        if episode.purpose == "matrix":
            out[_key(episode)] = max(out.get(_key(episode), 0), episode.replica + 1)
    return out


def next_round(
    config: FlakeproxyConfig, plan: Plan, cells: list[CellResult], done: Mapping[str, Episode], design: AdaptiveDesign
) -> list[Episode]:
    """The episodes the open cells need next, in plan order (none: every cell is settled, or at max)."""
    assert config.contract is not None
    invariants = {i.id: i for i in config.contract.invariants}
    ran, by_id = replicas_run(done), {e.id: e for e in plan.episodes}
    wanted: set[str] = set()
    for cell, need in open_cells(cells, design):
        invariant = invariants[cell.invariant]
        prompts = prompts_of(config, invariant)
        for episode in plan.episodes:
            if episode.purpose != "matrix" or episode.scenario != cell.scenario or episode.prompt not in prompts:
                continue
            if episode.invariant not in (None, cell.invariant) or episode.id in done:
                continue
            start = ran.get(_key(episode), 0)
            if start <= episode.replica < start + need:
                wanted.add(episode.id)
                calm = plan.baselines.get((episode.prompt, episode.replica)) if invariant.uses_baseline else None
                if calm is not None and calm not in done:
                    wanted.add(calm)
    return [by_id[i] for i in by_id if i in wanted]


async def run_adaptive(run: ContractRun, plan: Plan, runner: EpisodeRunner, limit: int) -> None:
    """Run the plan's first `min` replicas, then rounds of what open cells need, judging as each scenario's
    episodes come in; the cells stay in the order the first round judged them."""
    design = design_of(run.config)
    assert design is not None
    first = [e for e in plan.episodes if e.replica < design.min_replicas]
    await run._scenarios(dataclasses.replace(plan, episodes=first), runner, limit)
    order = {(c.invariant, c.scenario): n for n, c in enumerate(run.result.cells)}
    rounds = 1
    while wanted := next_round(run.config, plan, run.result.cells, run.done, design):
        rounds += 1
        waiting = len(open_cells(run.result.cells, design))
        run.progress(f"adaptive replicas, round {rounds}: {len(wanted)} more episode(s) for {waiting} open cell(s)")
        again = {e.scenario for e in wanted}
        previous = {(c.invariant, c.scenario): c for c in run.result.cells}
        run.result.cells = [c for c in run.result.cells if c.scenario not in again]
        try:
            await run._scenarios(Plan(wanted, plan.baselines, None), runner, limit)
        finally:  # a round cut short keeps the verdicts its scenarios had before it
            judged = {(c.invariant, c.scenario) for c in run.result.cells}
            run.result.cells += [c for key, c in previous.items() if key not in judged]
            run.result.cells.sort(key=lambda c: order.get((c.invariant, c.scenario), len(order)))
