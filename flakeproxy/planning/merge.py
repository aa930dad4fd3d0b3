"""`flakeproxy merge`: the shards of one contract run (`contract run --shard I/N`) as one result, judged and
scored from all their episodes together: exactly what the unsharded run gives."""

from __future__ import annotations

import hashlib
from pathlib import Path

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.errors import ConfigError
from flakeproxy.judging.cells import Context, judge_scenario
from flakeproxy.judging.coverage import coverage
from flakeproxy.judging.scoring import score_contract
from flakeproxy.judging.spending import loose_spend, run_spend, scenario_spend
from flakeproxy.planning.checks import has_reset, resolve_paths
from flakeproxy.planning.plan import STATEFUL_WARNING, plan_episodes
from flakeproxy.results import RunResult


def _check(shards: list[tuple[str, RunResult]], config_path: str) -> int:
    """The shard count, or a one-line ConfigError saying which shard is wrong, missing or foreign."""
    sha = hashlib.sha256(Path(config_path).read_bytes()).hexdigest()
    counts = set()
    for name, result in shards:
        if result.shard is None and not result.complete and not result.episodes:  # a trial's shard that never began
            why = f" ({result.interrupted_by})" if result.interrupted_by else ""
            raise ConfigError(f"{name}: a run that stopped before its first episode{why}; run its shard again")
        if result.shard is None:
            raise ConfigError(f"{name}: not a shard's results.json; run contract run --shard I/N first")
        if result.config_sha256 != sha:
            raise ConfigError(f"{name}: made from another config than {config_path}; merge shards of one config")
        if not result.complete:
            raise ConfigError(f"{name}: shard {result.shard.index}/{result.shard.count} did not finish; run it again")
        counts.add(result.shard.count)
    seeds = {r.seed for _, r in shards}
    if len(counts) != 1 or len(seeds) != 1:
        raise ConfigError(f"the shards disagree on the shard count {sorted(counts)} or seed {sorted(seeds)}")
    count = counts.pop()
    seen = sorted(r.shard.index for _, r in shards if r.shard is not None)
    if len(seen) != len(set(seen)):  # first: shards [1, 1, 3] were told "shard 2 is missing" (a trial)
        raise ConfigError(f"a shard is given twice ({seen}); give each of the {count} once")
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise ConfigError(f"shard {missing[0]}/{count} is missing; merge needs all {count} shards")
    return count


def merge(config: FlakeproxyConfig, config_path: str, shards: list[tuple[str, RunResult]]) -> RunResult:
    """Judge every cell and score from the shards' episodes (same config and seed, every shard once)."""
    _check(shards, config_path)
    config = resolve_paths(config, config_path)
    plan = plan_episodes(config, has_reset(config))
    episodes = {e.id: e for _, r in shards for e in r.episodes}
    absent = [e.id for e in plan.episodes if e.id not in episodes]
    if absent:
        raise ConfigError(f"the shards lack episodes {absent[:5]}; were they run from this config?")
    loose = [entry for _, r in shards for entry in r.unattributed_journal]
    ctx = Context(config, episodes, plan.baselines)
    ordered = sorted(episodes.values(), key=lambda e: e.number)
    cells = [cell for scenario in config.matrix for cell in judge_scenario(scenario, ordered, ctx)]
    warnings = list(dict.fromkeys(w for _, r in shards for w in r.warnings))
    if plan.stateful_check is not None:
        first, second = (episodes[i] for i in plan.stateful_check)
        if first.answer != second.answer and STATEFUL_WARNING not in warnings:
            warnings.append(STATEFUL_WARNING)
    covered = coverage(config, ordered, loose)
    first_shard = min((r for _, r in shards), key=lambda r: r.shard.index if r.shard else 0)
    return first_shard.model_copy(
        update={
            "shard": None,
            "episodes": ordered,
            "cells": cells,
            "coverage": covered,
            "warnings": warnings,
            "score": score_contract(config, cells, covered),
            "spend": scenario_spend(config, ordered),  # amplification over the calm runs of every shard
            "spend_total": run_spend(config, ordered, loose),
            "spend_unattributed": loose_spend(config, loose),
            "agent_invocations": sum(r.agent_invocations for _, r in shards),
            "unattributed_requests": sum(r.unattributed_requests for _, r in shards),
            "unattributed_journal": loose,
            "finished_at": max((r.finished_at or "" for _, r in shards), default=None),
            "complete": True,
            "interrupted_by": None,
        }
    )
