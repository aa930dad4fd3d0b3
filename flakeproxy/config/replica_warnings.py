"""Warnings about replicas and scoring.min_pass_rate: a min_pass_rate no rule reads (unread_min_pass_rate), and
replicas too few for the rate rule to PASS a cell: at scoring.min_pass_rate and confidence no rule
with that error statement can PASS on fewer than a known number of replicas, all passing
(flakeproxy/judging/stats_plan.py min_replicas_to_pass), which `flakeproxy plan` prints and a run did not (a new
user's `--replicas 2:5` at min_pass_rate 0.8: every passing cell stopped INCONCLUSIVE)."""

from __future__ import annotations

from flakeproxy.config.settings import RunConfig, ScoringConfig
from flakeproxy.judging.stats_plan import min_replicas_to_pass


def too_few_replicas_to_pass(run: RunConfig, scoring: ScoringConfig) -> list[str]:
    """One line when the most replicas a cell can get (the adaptive max; fixed ones under replica_aggregation:
    rate) are fewer than a PASS needs; none when no rate rule reads min_pass_rate."""
    threshold, adaptive = scoring.min_pass_rate, run.adaptive
    if threshold is None or (adaptive is None and scoring.replica_aggregation != "rate"):
        return []
    need = min_replicas_to_pass(threshold, scoring.confidence)
    if run.max_replicas >= need:
        return []
    rule = f"scoring.min_pass_rate {threshold:g} (confidence {scoring.confidence:g}) needs {need} replicas, all passing"
    if adaptive is None:
        return [
            f"run.replicas {run.replicas} (or --replicas {run.replicas}): replica_aggregation: rate at {rule}, to "
            f"PASS a cell, so every cell ends FAIL or INCONCLUSIVE at best; raise run.replicas to {need} or more "
            "(--replicas N), or lower scoring.min_pass_rate"
        ]
    outcome = (
        "ends every passing cell INCONCLUSIVE"
        if scoring.replica_aggregation == "rate"
        else f"stops a passing cell early, judged by {scoring.replica_aggregation} on its few replicas"
    )
    return [
        f"run.replicas max {adaptive.max} (run.replicas {{min: {adaptive.min}, max: {adaptive.max}}} or --replicas "
        f"{adaptive.min}:{adaptive.max}): the adaptive rule at {rule}, to PASS a cell, so it {outcome}; raise the "
        f"max to {need} or more (--replicas {adaptive.min}:{need}), or lower scoring.min_pass_rate"
    ]


def unread_min_pass_rate(run: RunConfig, scoring: ScoringConfig) -> list[str]:
    """What to say of a scoring.min_pass_rate no rule reads (fixed replicas, aggregation not rate): a warning, not an
    error, since `--replicas MIN:MAX` needs it in the config (a new user set it as that error said, and then every
    run without the option was refused)."""
    if scoring.min_pass_rate is None or scoring.replica_aggregation == "rate" or run.adaptive is not None:
        return []
    return [
        f"scoring.min_pass_rate {scoring.min_pass_rate:g} is read only by replica_aggregation: rate or adaptive "
        f"replicas (run.replicas {{min, max}} or --replicas MIN:MAX), not by {scoring.replica_aggregation} with "
        f"{run.replicas} fixed replica(s): this run judges without it"
    ]
