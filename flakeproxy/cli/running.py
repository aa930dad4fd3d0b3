"""Running a long command: SIGTERM (CI cancellation, docker stop) and Ctrl-C stop it with the results written."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from flakeproxy.cli.held import HeldSignals
from flakeproxy.cli.written import written_files, written_line
from flakeproxy.console import echo
from flakeproxy.crash import crashed
from flakeproxy.errors import BudgetCrossed, ConfigError, FlakeproxyError, InfrastructureError
from flakeproxy.results import RunResult
from flakeproxy.safe_text import escaped, visible

if TYPE_CHECKING:
    from flakeproxy.config import FlakeproxyConfig

T = TypeVar("T")


def write_reports(out: Path, formats: list[str], result: RunResult) -> None:
    """The chosen reports next to results.json."""
    from flakeproxy.reports import write

    if formats:
        write(result, out, formats)


def write_reports_after_interrupt(out: Path, formats: list[str], since: float = 0.0) -> RunResult | None:
    """The reports of what a stopped run did, from the results.json it wrote, and those results (None: it wrote
    none, or one older than `since`, the run's start, which is another run's)."""
    from flakeproxy.cli.report import load_result

    results = out / "results.json"
    try:
        if not results.exists() or results.stat().st_mtime < since:
            return None
        result = load_result(results)
        write_reports(out, formats, result)
    except (FlakeproxyError, OSError) as e:
        echo(f"warning: no reports written for the stopped run: {e}", err=True)
        return None
    return result


#: Said after the files of a run that stopped before any episode: they replaced the previous run's, on purpose.
NOTHING_RAN = "this run's record: it stopped before any episode ended"


def show_stopped(
    out: Path,
    formats: list[str],
    since: float,
    show: Callable[[RunResult], None] | None,
    unwritten: RunResult | None = None,
) -> None:
    """After a run that stopped early (exit 3, 5, 130, 143): its reports, what it did (`show`, e.g. the matrix so
    far) and the files it wrote, as a finished run says them; before the error line that ends the output.

    A run that stopped before any episode (an agent unreachable, a port taken, a sidecar never ready) wrote its
    record too: an incomplete results.json saying why, in place of the previous run's, so that no CI step reads an
    older run's verdict as this one's. Nothing to show then, but the files are named, and why they hold nothing.
    `unwritten`: the record to write when the run stopped before it wrote one (a signal during its start-up)."""
    result = write_reports_after_interrupt(out, formats, since)
    if result is None and unwritten is not None:
        from flakeproxy.runner.results_file import write

        write(unwritten, out)
        result = write_reports_after_interrupt(out, formats, since)
    if result is None:
        return
    if result.episodes and show is not None:
        show(escaped(result))
    files = written_files(out, formats)
    echo(written_line(files) + ("" if result.episodes or not files else f" ({NOTHING_RAN})"), err=True)


def run_until_signal(
    start: Callable[[], Awaitable[T]],
    out: Path,
    on_interrupt: Callable[[str], None] = lambda name: None,
    held: HeldSignals | None = None,
) -> T:
    """Run start() to completion; on SIGTERM or SIGINT cancel it (it writes its results as it stops), call
    on_interrupt with the signal's name (e.g. to write the reports of what was done), say where the results are in
    one line, and exit 143 or 130. `held`: the signals held while the command started; one that came then stops
    the run at once."""
    stopped_by: list[str] = []

    async def main() -> T:
        task, loop = asyncio.current_task(), asyncio.get_running_loop()
        assert task is not None

        def stop(name: str) -> None:
            stopped_by.append(name)
            task.cancel(name)  # the run's results say which signal (RunResult.interrupted_by)

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop, sig.name)
        if held is not None and held.pending:  # the loop's handlers replaced its (and restore the defaults after)
            stop(held.pending[0])
        try:
            return await start()
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)

    try:
        result = asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        name = stopped_by[0] if stopped_by else "SIGINT"
        on_interrupt(name)
        echo(f"error: interrupted by {name}; the results so far are in {out / 'results.json'}", err=True)
        raise SystemExit(143 if name == "SIGTERM" else 130) from None
    if held is not None:
        held.hold_again()  # from the loop's end until the run's files are written and said
    return result


def run_and_report(
    run: Callable[[Callable[[str], None]], Awaitable[RunResult]],
    out: Path,
    formats: list[str],
    quiet: bool,
    show: Callable[[RunResult], None] | None = None,
    record: Callable[[], RunResult] | None = None,
    held: HeldSignals | None = None,
) -> RunResult:
    """A run command's common part: progress lines on stderr (unless quiet), SIGTERM and Ctrl-C handled,
    the chosen reports written beside results.json; a run that stopped early still writes them from what was
    done, shows it (`show`) and names the files. `record`: this run's empty record, written (incomplete, with the
    signal's name) when a signal stopped it before it wrote one; `held`: the signals held while it started, held
    again once the run has ended (released by its owner once the command is done; without it, here).

    A signal while the reports of a finished run are written waits for them: then the run's files are named and it
    exits 143 or 130 saying they are complete (a trial's Ctrl-C then left the previous run's report.html beside
    this run's results.json). One after that, while the caller prints, changes nothing: the files are complete."""
    with output_held(out):
        return _run_and_report(run, out, formats, quiet, show, record, held)


def _run_and_report(
    run: Callable[[Callable[[str], None]], Awaitable[RunResult]],
    out: Path,
    formats: list[str],
    quiet: bool,
    show: Callable[[RunResult], None] | None,
    record: Callable[[], RunResult] | None,
    held: HeldSignals | None,
) -> RunResult:
    own = held is None
    held = held if held is not None else HeldSignals()

    def progress(line: str) -> None:
        if not quiet:
            echo(visible(line), err=True)  # names from the config, shown, never run by the terminal

    since = time.time() - 1  # results.json written from here on is this run's (mtime granularity)

    def interrupted(name: str) -> None:
        show_stopped(out, formats, since, show, _stopped_record(record, name))

    try:
        try:
            result = run_until_signal(lambda: run(progress), out, interrupted, held)
        except (InfrastructureError, BudgetCrossed):  # it stopped (it wrote its results so far): reports, exit 3/5
            show_stopped(out, formats, since, show)
            raise
        result = escaped(result)  # whatever the agent answered, the terminal and the reports can show it
        try:
            write_reports(out, formats, result)
        except Exception as e:
            raise crashed(e, out) from e
        if late := held.late():
            _stopped_as_it_ended(late[0], out, formats, result, show)
    finally:
        if own:
            held.release()
    end_unless_user_code()
    return result


@contextlib.contextmanager
def output_held(out: Path) -> Iterator[None]:
    """The output folder for this run alone: a second run into the same folder while this one runs is refused
    before it writes anything (a trial's second run wrote its "nothing ran" record over the first's results). An
    flock on the folder itself (nothing is added to it), so a run that died, even by SIGKILL, holds nothing; where
    there is no flock, nothing is held."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # a folder this user cannot write: the run says so in its own words (check_writable)
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"another flakeproxy run is writing its results into {out}; wait for it to end, or give this one a "
                "folder of its own with -o"
            ) from None
        yield
    finally:
        os.close(fd)


def _stopped_as_it_ended(
    name: str, out: Path, formats: list[str], result: RunResult, show: Callable[[RunResult], None] | None
) -> None:
    """A signal came while a finished run's reports were written: they are, so say so, name them, exit 143/130."""
    if show is not None:
        show(result)
    echo(written_line(written_files(out, formats)), err=True)
    echo(f"error: interrupted by {name} as the run ended; its results and reports in {out} are complete", err=True)
    raise SystemExit(143 if name == "SIGTERM" else 130)


def end_unless_user_code() -> None:
    """A run whose files are written and whose proxy has stopped ends without the interpreter's teardown
    (cli/main.py end_at_once), unless it imported the user's code into this process (a python agent, its tools):
    objects of theirs may count on the teardown to finish their work."""
    from flakeproxy.cli.main import end_at_once

    python = sys.modules.get("flakeproxy.runner.agents.python")  # not imported: no python agent ran here
    if python is None or not python.imported_user_code:
        end_at_once()


def empty_record(config: FlakeproxyConfig, config_path: str) -> Callable[[], RunResult]:
    """run_and_report's `record` for a run of config: its record before any episode (runner/results_file)."""

    def record() -> RunResult:
        from flakeproxy.runner.results_file import new_result

        return new_result(config, config_path)

    return record


def _stopped_record(record: Callable[[], RunResult] | None, signal_name: str) -> RunResult | None:
    """The record of a run a signal stopped before it wrote one: nothing ran, interrupted_by says which signal."""
    if record is None:
        return None
    from flakeproxy.runner.results_file import now

    result = record()
    result.interrupted_by, result.finished_at = signal_name, now()
    return result
