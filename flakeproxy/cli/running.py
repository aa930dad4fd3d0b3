"""Running a long command: SIGTERM (CI cancellation, docker stop) and Ctrl-C stop it with the results written."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import click

from flakeproxy.crash import crashed
from flakeproxy.errors import BudgetCrossed, FlakeproxyError, InfrastructureError
from flakeproxy.results import RunResult
from flakeproxy.safe_text import escaped, visible

T = TypeVar("T")


def write_reports(out: Path, formats: list[str], result: RunResult | None = None) -> None:
    """The chosen reports next to results.json; after an interrupted run, from the results.json it left."""
    from flakeproxy.cli.report import load_result
    from flakeproxy.reports import write

    if not formats:
        return
    if result is None:
        if not (out / "results.json").exists():
            return
        result = load_result(out / "results.json")
    write(result, out, formats)


def write_reports_after_interrupt(out: Path, formats: list[str], since: float = 0.0) -> None:
    """The reports of what a stopped run did, from the results.json it wrote (one older than `since`, the run's
    start, is another run's: then none)."""
    results = out / "results.json"
    try:
        if results.exists() and results.stat().st_mtime >= since:
            write_reports(out, formats)
    except (FlakeproxyError, OSError) as e:
        click.echo(f"warning: no reports written for the stopped run: {e}", err=True)


def run_until_signal(
    start: Callable[[], Awaitable[T]], out: Path, on_interrupt: Callable[[], None] = lambda: None
) -> T:
    """Run start() to completion; on SIGTERM or SIGINT cancel it (it writes its results as it stops), call
    on_interrupt (e.g. to write the reports of what was done), say where the results are in one line, and
    exit 143 or 130."""
    stopped_by: list[str] = []

    async def main() -> T:
        task, loop = asyncio.current_task(), asyncio.get_running_loop()
        assert task is not None

        def stop(name: str) -> None:
            stopped_by.append(name)
            task.cancel()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop, sig.name)
        try:
            return await start()
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)

    try:
        return asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        name = stopped_by[0] if stopped_by else "SIGINT"
        on_interrupt()
        click.echo(f"error: interrupted by {name}; the results so far are in {out / 'results.json'}", err=True)
        raise SystemExit(143 if name == "SIGTERM" else 130) from None


def run_and_report(
    run: Callable[[Callable[[str], None]], Awaitable[RunResult]], out: Path, formats: list[str], quiet: bool
) -> RunResult:
    """A run command's common part: progress lines on stderr (unless quiet), SIGTERM and Ctrl-C handled,
    the chosen reports written beside results.json (from what was done, if it was interrupted)."""

    def progress(line: str) -> None:
        if not quiet:
            click.echo(visible(line), err=True)  # names from the config, shown, never run by the terminal

    since = time.time() - 1  # results.json written from here on is this run's (mtime granularity)
    try:
        result = run_until_signal(
            lambda: run(progress), out, lambda: write_reports_after_interrupt(out, formats, since)
        )
    except (InfrastructureError, BudgetCrossed):  # the run stopped (it wrote its results so far): reports, exit 3/5
        write_reports_after_interrupt(out, formats, since)
        raise
    result = escaped(result)  # whatever the agent answered, the terminal and the reports can show it
    try:
        write_reports(out, formats, result)
    except Exception as e:
        raise crashed(e, out) from e
    return result
