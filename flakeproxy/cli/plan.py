"""`flakeproxy plan`: what a contract run will cost before it runs, and how many replicas a rate rule needs."""

from __future__ import annotations

from collections import Counter

import click

from flakeproxy.cli.options import config_option


def _rate_lines(min_pass_rate: float, rates: tuple[float, ...], confidence: float, power: float) -> list[str]:
    from flakeproxy.errors import ConfigError
    from flakeproxy.judging.stats_plan import min_replicas_to_pass, plan_replicas

    floor = min_replicas_to_pass(min_pass_rate, confidence)
    lines = [
        f"rate rule at min_pass_rate {min_pass_rate:g}, confidence {confidence:g}: no rule can PASS a cell with "
        f"fewer than {floor} replicas (all of them passing)"
    ]
    for p in rates:
        try:
            plan = plan_replicas(p, min_pass_rate, confidence, power)
        except ValueError as e:
            raise ConfigError(f"--pass-rate {p:g}: {e}") from e
        right = "PASS" if p >= min_pass_rate else "FAIL"
        fixed = f"{plan.fixed_replicas} fixed" if plan.fixed_replicas else "more than 2000 fixed"
        adaptive = (
            f"adaptive max {plan.adaptive_max} (about {plan.adaptive_expected:.1f} on average)"
            if plan.adaptive_max and plan.adaptive_expected is not None
            else "no adaptive max within 2000"
        )
        lines.append(f"  a cell passing {p:.0%} of the time: {right} with {power:.0%} power needs {fixed}, {adaptive}")
    return lines


@click.command()
@config_option
@click.option("--min-pass-rate", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="A rate rule's threshold to plan for (default: scoring.min_pass_rate).")  # fmt: skip
@click.option("--pass-rate", "rates", type=click.FloatRange(0, 1), multiple=True,
              help="A true pass rate to tell from the threshold (repeatable; default 0.5 and 0.99).")  # fmt: skip
@click.option("--confidence", type=click.FloatRange(0.5, 0.999),
              help="The intervals' confidence (default: scoring.confidence, 0.95).")  # fmt: skip
@click.option("--power", type=click.FloatRange(0.5, 0.999), default=0.8, show_default=True,
              help="The chance the verdict is the right one for that pass rate.")  # fmt: skip
def plan(
    config_path: str, min_pass_rate: float | None, rates: tuple[float, ...], confidence: float | None, power: float
) -> None:
    """Print what `contract run` will do with this config without running anything: the episodes (each one a
    paid agent invocation) by scenario and purpose, the cells, how many episodes run at once and why (e.g. one
    at a time whatever run.concurrency says, without run.attribution); with --min-pass-rate, how many
    replicas tell a given pass rate from that threshold, fixed and adaptive."""
    from flakeproxy.config import load_config
    from flakeproxy.planning.checks import has_reset, plan_contract
    from flakeproxy.planning.concurrency import run_concurrency
    from flakeproxy.planning.plan import plan_episodes

    config = load_config(config_path)
    summary = plan_contract(config, config_path)
    episodes = plan_episodes(config, has_reset(config)).episodes
    adaptive = config.run.adaptive
    episode_count = (
        f"{len(episodes)} episodes at {config.run.replicas} replica(s)"
        if adaptive is None
        else f"{sum(e.replica < adaptive.min for e in episodes)} to {len(episodes)} episodes at {adaptive.min} to "
        f"{adaptive.max} replicas (adaptive: more only where a cell is still open)"
    )
    click.echo(
        f"{config_path}: {summary.cells} cells ({summary.invariants} invariants x {summary.scenarios} scenarios, "
        f"{summary.not_applicable} not applicable), {episode_count}, {run_concurrency(config).said}"
    )
    by_scenario = Counter(e.scenario or f"({e.purpose})" for e in episodes)
    for name, count in by_scenario.items():
        click.echo(f"  {count:>5}  {name}")
    min_pass_rate = min_pass_rate if min_pass_rate is not None else config.scoring.min_pass_rate
    if min_pass_rate is not None:
        rates = rates or (0.5, 0.99)
        for line in _rate_lines(min_pass_rate, rates, confidence or config.scoring.confidence, power):
            click.echo(line)
