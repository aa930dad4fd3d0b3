"""`flakeproxy contract ...`: the contract commands."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from flakeproxy.cli.exits import EXIT_CODES
from flakeproxy.cli.main import started
from flakeproxy.cli.options import config_option, formats_option, quiet_option, record_option
from flakeproxy.cli.written import say_written
from flakeproxy.console import echo
from flakeproxy.reports import DEFAULT_FORMATS

if TYPE_CHECKING:
    from flakeproxy.config import FlakeproxyConfig
    from flakeproxy.results import RunResult

# The run commands import the config models, the planner and the runner only once their proxy child is started
# (runner/proxy_child.py early_proxy): its start-up then overlaps theirs on the machine's other core (issue 23).


@click.group()
def contract() -> None:
    """Run, validate and score a behavioral contract across the chaos matrix."""


@contract.command("validate")
@config_option
def validate_contract(config_path: str) -> None:
    """Validate the config and check everything `contract run` checks before it starts; print warnings."""
    from flakeproxy.config import load_config
    from flakeproxy.config.can_fail import validate_warnings
    from flakeproxy.planning.checks import plan_contract

    config = load_config(config_path)
    for warning in validate_warnings(config):
        click.echo(f"warning: {warning}", err=True)
    plan = plan_contract(config, config_path)
    click.echo(
        f"{config_path}: contract {plan.name!r} is valid: {plan.invariants} invariants x "
        f"{plan.scenarios} scenarios = {plan.cells} cells ({plan.not_applicable} not applicable by `when` or "
        "`scenarios`); "
        f"{'at most ' if config.run.adaptive else ''}{plan.invocations} agent invocations"
        + (
            f" in {plan.episodes} episodes (a conversation's turns each count)"
            if plan.invocations != plan.episodes
            else ""
        )
        + (
            f" ({plan.stateful_checks} of them outside the matrix: the agent has no reset, so its first prompt runs "
            "calm to tell whether it keeps state between episodes)"
            if plan.stateful_checks
            else ""
        )
    )


def _run(
    config_path: str,
    output: str | None,
    seed: int | None,
    concurrency: int | None,
    replicas: str | None,
    quiet: bool,
    formats: str = ",".join(DEFAULT_FORMATS),
    shard: tuple[int, int] | None = None,
    record: Path | None = None,
    show: Callable[[RunResult], None] | None = None,
) -> tuple[RunResult, Path, list[str]]:
    """The run, the folder it wrote into, and the reports written there (`show`: what to print of a run that
    stopped early, before its error line)."""
    from flakeproxy.cli.held import hold
    from flakeproxy.runner.proxy_child import early_proxy, end_child

    held = hold()  # a Ctrl-C from the start on stops the run once it is under way, which then writes its record
    early = None
    try:
        early = early_proxy(config_path)  # first: the proxy starts while this process loads the rest
        from flakeproxy.cli.running import empty_record, run_and_report

        wanted, config, out = _prepared(config_path, output, (seed, concurrency, replicas), formats, shard)

        async def start(progress: Callable[[str], None]) -> RunResult:
            from flakeproxy.runner.local import launch_local

            local = await launch_local(config, config_path, early)  # adopted, or stopped if not wanted
            from flakeproxy.runner.engine import run_contract_async

            started()
            result: RunResult = await run_contract_async(config, config_path, out, progress, shard, record, local)
            return result

        return run_and_report(start, out, wanted, quiet, show, empty_record(config, config_path), held), out, wanted
    finally:
        held.release()  # the handlers as before (a config error: nothing ran, nothing is written, exit 2)
        if early is not None:
            end_child(early)  # stopped by the run already; here if it never started (a config error, say)


def _prepared(
    config_path: str,
    output: str | None,
    overrides: tuple[int | None, int | None, str | None],
    formats: str,
    shard: tuple[int, int] | None,
) -> tuple[list[str], FlakeproxyConfig, Path]:
    """(the reports wanted, the config with the command line's overrides (seed, concurrency, replicas), the
    output folder)."""
    from flakeproxy.config import load_config
    from flakeproxy.config.overrides import with_overrides
    from flakeproxy.reports import parse_formats

    wanted = [] if shard is not None else parse_formats(formats)  # a shard's reports come from the merge
    config = with_overrides(load_config(config_path), *overrides)
    return wanted, config, Path(output or config.run.output)


def _show_matrix(result: RunResult) -> None:
    from flakeproxy.reports.terminal import render

    echo(render(result))


def _exit(result: RunResult) -> None:
    from flakeproxy.judging.scoring import exit_code

    raise SystemExit(exit_code(result.score.verdict if result.score is not None else None))


run_options = [
    config_option,
    click.option(
        "-o",
        "--output",
        type=click.Path(file_okay=False),
        help="Folder for results.json and the reports (default run.output).",
    ),
    click.option("--seed", type=int, help="Override run.seed."),
    click.option("--concurrency", type=click.IntRange(1, 64), help="Override run.concurrency."),
    click.option(
        "--replicas",
        metavar="N|MIN:MAX",
        help="Override run.replicas: N fixed replicas of every episode, or MIN:MAX adaptive ones (needs "
        "scoring.min_pass_rate); checked as run.replicas is, whatever the config had (fixed or adaptive).",
    ),
    formats_option(),
]


def _with_run_options(fn: Any) -> Any:
    for option in reversed(run_options):
        fn = option(fn)
    return fn


def _shard(shard: str | None, shards: int | None) -> tuple[int, int] | None:
    """--shard I/N, or --shards N with Kubernetes' JOB_COMPLETION_INDEX (0-based) as the index."""
    if shard is not None:
        from flakeproxy.planning.plan import parse_shard

        try:
            return parse_shard(shard)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--shard") from None
    if shards is None:
        return None
    index = os.environ.get("JOB_COMPLETION_INDEX")
    if index is None or not index.isdigit() or int(index) >= shards:
        raise click.BadParameter(
            f"needs JOB_COMPLETION_INDEX between 0 and {shards - 1} (a Kubernetes Indexed Job sets it), "
            f"got {index!r}; or use --shard I/N",
            param_hint="--shards",
        )
    return int(index) + 1, shards


@contract.command("run", epilog=EXIT_CODES)
@_with_run_options
@quiet_option
@click.option(
    "--shard",
    envvar="FLAKEPROXY_SHARD",
    help="Run shard I/N of the episodes only (e.g. 2/4; env FLAKEPROXY_SHARD); flakeproxy merge judges them all.",
)
@click.option("--shards", type=click.IntRange(1, 1000), help="N shards, this one chosen by JOB_COMPLETION_INDEX.")
@record_option(
    "Write one replay session file per episode into DIR: the prompt, the answer and every exchange on the "
    "wire, whole, SSE events with their timing."
)
def run_contract_command(
    config_path: str,
    output: str | None,
    seed: int | None,
    concurrency: int | None,
    replicas: str | None,
    formats: str,
    shard: str | None,
    shards: int | None,
    record: Path | None,
    quiet: bool,
) -> None:
    """Run every invariant in every scenario of the chaos matrix; print the matrix, the score, PASS/FAIL.

    Progress goes to stderr, the matrix to stdout (also of a run that stopped early: what ran so far);
    results.json, junit.xml, report.html and summary.md to --output. With --shard, only that share of the
    episodes runs and results.json holds them unjudged: `flakeproxy merge` the shards' results (exit 0
    once the shard ran).
    """
    part = _shard(shard, shards)
    show = _show_matrix if part is None else None
    result, out, wanted = _run(
        config_path, output, seed, concurrency, replicas, quiet, formats=formats, shard=part, record=record, show=show
    )
    from flakeproxy.reports.terminal import render

    sessions = [record] if record is not None and record.exists() else []
    if part is not None:
        click.echo(
            f"shard {part[0]}/{part[1]}: ran {len(result.episodes)} episodes; combine the {part[1]} shards' "
            "results.json with: flakeproxy merge -c CONFIG DIR..."
        )
        say_written(out, wanted, sessions)
        raise SystemExit(0)
    echo(render(result))
    say_written(out, wanted, sessions)
    _exit(result)


@contract.command("score", epilog=EXIT_CODES)
@_with_run_options
def score_command(
    config_path: str, output: str | None, seed: int | None, concurrency: int | None, replicas: str | None, formats: str
) -> None:
    """Run the contract and print the resilience score alone (e.g. 87.5) on stdout, nothing else there."""
    result, out, wanted = _run(config_path, output, seed, concurrency, replicas, quiet=True, formats=formats)
    assert result.score is not None
    click.echo("not scored" if result.score.resilience is None else f"{result.score.resilience:.1f}")
    say_written(out, wanted)
    _exit(result)
