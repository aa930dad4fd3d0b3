"""`flakeproxy ci`: the four pillars once each and the overall score; `flakeproxy profiles`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from flakeproxy.cli.exits import EXIT_CODES
from flakeproxy.cli.held import HeldSignals, hold
from flakeproxy.cli.main import started
from flakeproxy.cli.options import config_option, formats_option, quiet_option
from flakeproxy.cli.running import empty_record, run_and_report
from flakeproxy.cli.written import say_written
from flakeproxy.config import load_config
from flakeproxy.console import echo
from flakeproxy.reports import parse_formats
from flakeproxy.results import RunResult


@click.command(epilog=EXIT_CODES)
@config_option
@click.option("-o", "--output", type=click.Path(file_okay=False), help="Folder for results.json (default run.output).")
@click.option(
    "--min-score",
    type=click.FloatRange(0, 100),
    help="Fail when the overall score (0-100) is below this (default scoring.min_overall).",
)
@quiet_option
@formats_option()
def ci(config_path: str, output: str | None, min_score: float | None, quiet: bool, formats: str) -> None:
    """Run every configured pillar once: contract (the matrix), chaos (top-level chaos: judged by
    invariants:), mutation (mutations: of the golden prompts, judged by invariants:), replay (the
    replays: sessions served back by the proxy, judged by the contract). Prints one line per pillar and
    the overall score: the weighted mean of the pillars that ran, with absent pillars' weights spread
    over them in proportion. Exit 1 when the contract fails, a pillar
    cannot be scored, or the overall is below --min-score."""
    held = hold()  # a Ctrl-C while the config loads stops the run once under way: it writes its record
    try:
        _ci(config_path, output, min_score, quiet, formats, held)
    finally:
        held.release()


def _ci(
    config_path: str, output: str | None, min_score: float | None, quiet: bool, formats: str, held: HeldSignals
) -> None:
    from flakeproxy.reports.terminal import render
    from flakeproxy.runner.ci import run_ci_async

    wanted = parse_formats(formats)
    config = load_config(config_path)
    out = Path(output or config.run.output)
    if min_score is not None and 0 < min_score <= 1:
        click.echo(
            f"warning: --min-score {min_score:g} is a percentage (0-100); did you mean {min_score * 100:g}?", err=True
        )

    async def start(progress: Callable[[str], None]) -> RunResult:
        started()
        result: RunResult = await run_ci_async(config, config_path, out, progress, min_score)
        return result

    def show(stopped: RunResult) -> None:
        echo(render(stopped))

    result = run_and_report(start, out, wanted, quiet, show, empty_record(config, config_path), held)
    echo(render(result))
    say_written(out, wanted, [out / "mutations.json"] if config.mutations is not None else [])
    from flakeproxy.judging.scoring import exit_code

    raise SystemExit(exit_code(result.ci.verdict if result.ci is not None else None))


@click.command()
def profiles() -> None:
    """List the built-in chaos profiles (chaos: {profile: NAME}) with their faults."""
    from flakeproxy.planning.profiles import describe_profiles

    click.echo("\n".join(describe_profiles()))
