"""The `flakeproxy` group, and the one place user errors become one line and an exit code."""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import os
import sys

import click

from flakeproxy.cli.exits import EXIT_CODES
from flakeproxy.cli.held import hold, is_run_command
from flakeproxy.console import echo, std_stream
from flakeproxy.errors import FlakeproxyError
from flakeproxy.safe_text import escape_surrogates, visible
from flakeproxy.version import __version__

#: command -> (its module, the click command's name there, the start of its help: `flakeproxy --help` shortens it
#: as click would the command's own). Each
#: module is imported only when its command runs: `flakeproxy --help` imports none of them, and `flakeproxy proxy`
#: none of the runner's, reports' or judges' code (tests/test_imports.py checks the lines match).
COMMANDS = {
    "ca": (
        "flakeproxy.cli.ca",
        "ca",
        "Print the forward listener's CA certificate (made in proxy.ca_dir if it is not there yet).",
    ),
    "ci": (
        "flakeproxy.cli.ci",
        "ci",
        "Run every configured pillar once: contract (the matrix), chaos (top-level chaos: judged by invariants:),",
    ),
    "compare": (
        "flakeproxy.cli.compare",
        "compare",
        "Compare two runs' results.json (files, or folders holding one), cell by cell: the change in pass rate with",
    ),
    "contract": (
        "flakeproxy.cli.contract",
        "contract",
        "Run, validate and score a behavioral contract across the chaos matrix.",
    ),
    "demo": (
        "flakeproxy.cli.demo",
        "demo",
        "Run the demo: a fake LLM, a market-data API and an MCP news server on loopback, a careful and a naive agent",
    ),
    "init": (
        "flakeproxy.cli.init",
        "init",
        "Write a starter flakeproxy.yaml for your own agent: listeners and targets for the LLM and tool APIs it calls,",
    ),
    "merge": (
        "flakeproxy.cli.merge",
        "merge",
        "Combine the results.json of every shard (files, or folders holding one) of `contract run --shard I/N` into",
    ),
    "mock": (
        "flakeproxy.cli.mock",
        "mock",
        "Serve the http_mock services of the config: canned answers from their routes, every request recorded (GET",
    ),
    "plan": (
        "flakeproxy.cli.plan",
        "plan",
        "Print what `contract run` will do with this config without running anything: the episodes (each one a paid",
    ),
    "profiles": (
        "flakeproxy.cli.ci",
        "profiles",
        "List the built-in chaos profiles (chaos: {profile: NAME}) with their faults.",
    ),
    "proxy": (
        "flakeproxy.cli.proxy",
        "proxy",
        "Run the proxy: a reverse listener per proxy.listeners entry, and the control API.",
    ),
    "replay": (
        "flakeproxy.cli.replay",
        "replay",
        "Replay sessions recorded on the wire (proxy --record, contract run --record, replay export).",
    ),
    "report": (
        "flakeproxy.cli.report",
        "report",
        "Render a results.json (from `contract run`, even an interrupted one) as a report; runs nothing.",
    ),
    "schema": ("flakeproxy.cli.schema", "schema", 'Print the JSON Schema of flakeproxy.yaml (version "2.0").'),
    "validate": (
        "flakeproxy.cli.validate",
        "validate",
        "Validate a flakeproxy.yaml: keys, types, fault modes, invariants, and cross-references.",
    ),
}


def short_help(name: str, limit: int) -> str:
    """The command's line in `flakeproxy --help`, shortened as click shortens the command's own help."""
    return click.Command(name, help=COMMANDS[name][2]).get_short_help_str(limit)


class LazyGroup(click.Group):
    """A group whose subcommands are imported when one runs (or is asked for its own help)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, name, _ = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(module), name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            names = self.list_commands(ctx)
            limit = formatter.width - 6 - max(len(name) for name in names)
            formatter.write_dl([(name, short_help(name, limit)) for name in names])


EPILOG = EXIT_CODES + "\nEvery option can also be set as FLAKEPROXY_<COMMAND>_<OPTION>, and -c as FLAKEPROXY_CONFIG."


@click.group(
    cls=LazyGroup,
    context_settings={"auto_envvar_prefix": "FLAKEPROXY", "help_option_names": ["-h", "--help"]},
    epilog=EPILOG,
)
@click.version_option(__version__, prog_name="flakeproxy")
def cli() -> None:
    """Test whether an AI agent keeps its rules when its LLM, tool and MCP calls break.

    flakeproxy sits as a proxy between your agent and what it calls, breaks those calls one
    scenario at a time, and judges the answers against a contract of invariants.
    """


#: The collector's thresholds while a command starts: no young collection until a million objects more are made than
#: freed. Start-up makes hundreds of thousands of objects that live as long as the process (modules, models,
#: mitmproxy's and pydantic's tables) and collecting them young only walks them over and over: 30 ms of the proxy's
#: start (issue 23). High rather than off, so that a command that never says `started()` still collects.
STARTING_THRESHOLD = (1_000_000, 100, 100)
_after_start: tuple[int, int, int] | None = None
_torn_down = False  # end_at_once() was said


def entry(argv: list[str] | None = None) -> None:
    """The `flakeproxy` program (console script, `python -m flakeproxy`, the proxy child): main() with the
    collector held back while the command starts (STARTING_THRESHOLD, until `started()`), then an exit that
    leaves the objects alive at the end to the module teardown instead of the collector walking them all once
    more (a run's or the proxy's exit took 0.12 s, 0.02 s so; issue 23). atexit handlers still run. Not in
    main(), which tests call in their own process."""
    global _after_start
    standard_streams()
    if is_run_command(sys.argv[1:] if argv is None else argv):
        hold()  # first: a Ctrl-C while the run starts is acted on once it is under way (cli/held.py)
    if _after_start is None:  # else a proxy child forked while its runner started (runner/forked.py): the runner's
        _after_start = gc.get_threshold()
    gc.set_threshold(*STARTING_THRESHOLD)
    try:
        main(argv)
    except SystemExit as e:
        if _torn_down and (e.code is None or isinstance(e.code, int)):
            atexit._run_exitfuncs()  # logging's flush, and any other
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError):  # a reader gone (`| head`): as the teardown would
                    stream.flush()
            os._exit(e.code or 0)
        raise
    finally:
        gc.freeze()


def standard_streams() -> None:
    """A stdin, stdout or stderr the process was started without (`>&-`) is /dev/null instead: Python leaves
    sys.stdout None then (the run's first flush failed before anything was written), and the next file or pipe the
    process opens would take the free number, so that a line meant for stdout went into it."""
    for fd, flags, name in ((0, os.O_RDONLY, "stdin"), (1, os.O_WRONLY, "stdout"), (2, os.O_WRONLY, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, flags)  # the lowest free number, which is fd itself
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if getattr(sys, name) is None:
            setattr(sys, name, std_stream(fd))


def end_at_once() -> None:
    """The command has stopped cleanly and closed all it opened (the proxy, once its server returned; a run, once
    its files are written and its proxy stopped): entry() then exits with the command's code after the atexit
    handlers and a flush, without the interpreter's teardown of its ~1,000 modules (13-16 ms of each proxy's and
    each run's end; issue 23). Not for a process that ran the user's code (cli/running.py says when)."""
    global _torn_down
    _torn_down = True


def started() -> None:
    """A long-running command is past its start-up (the proxy ready, a run about to start its episodes): what
    start-up made moves to the permanent generation, where no collection walks it again, and the collector runs
    at its usual pace. Outside entry() (tests call main()), and on a second call, nothing."""
    global _after_start
    if _after_start is not None:
        gc.freeze()
        gc.set_threshold(*_after_start)
        _after_start = None


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a FlakeproxyError prints one line (no traceback) and exits with its code."""
    try:
        cli.main(args=argv, prog_name="flakeproxy", standalone_mode=False)
    except FlakeproxyError as e:
        echo(visible(escape_surrogates(f"error: {e}")), err=True)
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        echo("error: interrupted", err=True)
        sys.exit(130)
    except click.UsageError as e:  # one line, as every other error: what is wrong, and where the usage is
        where = e.ctx.command_path if e.ctx is not None else "flakeproxy"
        said = " ".join(e.format_message().split()).rstrip(".")
        echo(visible(escape_surrogates(f"error: {said}; see '{where} --help'")), err=True)
        sys.exit(e.exit_code)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    sys.exit(0)
