"""`flakeproxy replay run|export`: replay recorded sessions through the agent; export sessions from results."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from flakeproxy.cli.main import started
from flakeproxy.cli.options import config_option, formats_option
from flakeproxy.cli.running import run_and_report
from flakeproxy.cli.written import say_written
from flakeproxy.config import load_config
from flakeproxy.reports import parse_formats
from flakeproxy.results import RunResult


@click.group()
def replay() -> None:
    """Replay sessions recorded on the wire (proxy --record, contract run --record, replay export)."""


@replay.command("run")
@config_option
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("-o", "--output", type=click.Path(file_okay=False), help="Folder for results.json (default run.output).")
@click.option("--match", type=click.Choice(["strict", "args", "order"]), help="Override replays.match.")
@click.option("--unmatched", type=click.Choice(["error", "forward", "404"]), help="Override replays.unmatched.")
@click.option("--speed", type=click.FloatRange(0), help="Override replays.speed (1 recorded timing, 0 no delays).")
@click.option("--llm", type=click.Choice(["replay", "live"]), help="Override replays.llm (live: the real LLM answers).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@formats_option()
def run_command(
    config_path: str,
    paths: tuple[str, ...],
    output: str | None,
    match: str | None,
    unmatched: str | None,
    speed: float | None,
    llm: str | None,
    quiet: bool,
    formats: str,
) -> None:
    """Send each session's input to the agent while the proxy serves the session's recorded responses
    instead of the upstreams (LLM too, unless replays.llm: live); the contract's invariants judge each
    answer. PATHs (session files, folders, globs) replace the config's replays: sources.

    A request no recording matches is reported by target and URL, and (unmatched: error) makes its
    session ERROR. Prints one line per session and the replay score (severity-weighted pass rate).
    Exit 0 when every session holds, 1 otherwise, 2 for a bad config or session file, 3 infrastructure.
    """
    from flakeproxy.runner.replay import run_replay_async

    config = load_config(config_path)
    given = (("match", match), ("unmatched", unmatched), ("speed", speed), ("llm", llm))
    overrides = {k: v for k, v in given if v is not None}
    if overrides:
        from flakeproxy.config.replays import ReplaysConfig

        replays = config.replays or ReplaysConfig(sources=list(paths) or ["."])
        config = config.model_copy(update={"replays": replays.model_copy(update=overrides)})
    out = Path(output or config.run.output)

    async def start(progress: Callable[[str], None]) -> RunResult:
        started()
        result: RunResult = await run_replay_async(config, config_path, out, progress, paths)
        return result

    wanted = parse_formats(formats)
    result = run_and_report(start, out, wanted, quiet)
    assert result.replay is not None
    for s in result.replay.sessions:
        same = {True: "; answer as recorded", False: "; answer differs from the recording", None: ""}
        click.echo(f"{s.outcome.upper():5} {s.session}: {s.reason}{same[s.answer_matches_recording]}")
    score = "n/a" if result.replay.score is None else f"{result.replay.score:.1f}%"
    click.echo(f"replay score {score} {result.replay.verdict}: {result.replay.summary}; results in {out}")
    say_written(out, wanted)
    raise SystemExit(0 if result.replay.passed else 1)


@replay.command("export")
@click.option(
    "--from",
    "source",
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="A results.json (contract run, ci, replay run), or the output folder holding it.",
)
@click.option("--failed", is_flag=True, help="Only the episodes of failed or errored cells.")
@click.option(
    "-o",
    "--output",
    default="sessions",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the session files.",
)
def export_command(source: Path, failed: bool, output: Path) -> None:
    """Write a replay session file for each episode of a results.json (with --failed, of failing cells).

    Episodes carry their journal, already redacted: each request and response becomes an exchange. The
    journal keeps bodies up to 64 KiB and no SSE event timing: such sessions say so in their notes and
    replay their events without delays. Record with `contract run --record DIR` for full fidelity.
    """
    from flakeproxy.cli.report import load_result, results_file
    from flakeproxy.replay.export import export_sessions
    from flakeproxy.replay.files import write_session

    result = load_result(results_file(source))
    sessions = export_sessions(result, failed)
    for session in sessions:
        click.echo(str(write_session(output, session)))
    what = "failing episodes" if failed else "episodes"
    click.echo(f"exported {len(sessions)} sessions ({what} with a journal) to {output}", err=True)
