"""The `flakeproxy` group, and the one place user errors become one line and an exit code."""

from __future__ import annotations

import sys

import click

from flakeproxy.cli.ca import ca
from flakeproxy.cli.ci import ci, profiles
from flakeproxy.cli.contract import contract
from flakeproxy.cli.demo import demo
from flakeproxy.cli.init import init
from flakeproxy.cli.merge import merge
from flakeproxy.cli.mock import mock
from flakeproxy.cli.proxy import proxy
from flakeproxy.cli.replay import replay
from flakeproxy.cli.report import report
from flakeproxy.cli.schema import schema
from flakeproxy.cli.validate import validate
from flakeproxy.errors import FlakeproxyError
from flakeproxy.safe_text import escape_surrogates, visible
from flakeproxy.version import __version__

EXIT_CODES = """\b
Exit codes: 0 pass, 1 the contract or a threshold failed, 2 the config or the
command line is wrong, 3 the infrastructure failed (agent or proxy unreachable),
130 / 143 interrupted by Ctrl-C / SIGTERM (the results so far are written).
Every option can also be set as FLAKEPROXY_<COMMAND>_<OPTION>, and -c as FLAKEPROXY_CONFIG."""


@click.group(
    context_settings={"auto_envvar_prefix": "FLAKEPROXY", "help_option_names": ["-h", "--help"]},
    epilog=EXIT_CODES,
)
@click.version_option(__version__, prog_name="flakeproxy")
def cli() -> None:
    """Test whether an AI agent keeps its rules when its LLM, tool and MCP calls break.

    flakeproxy sits as a proxy between your agent and what it calls, breaks those calls one
    scenario at a time, and judges the answers against a contract of invariants.
    """


cli.add_command(init)
cli.add_command(validate)
cli.add_command(schema)
cli.add_command(contract)
cli.add_command(proxy)
cli.add_command(ca)
cli.add_command(demo)
cli.add_command(mock)
cli.add_command(ci)
cli.add_command(profiles)
cli.add_command(merge)
cli.add_command(report)
cli.add_command(replay)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a FlakeproxyError prints one line (no traceback) and exits with its code."""
    try:
        cli.main(args=argv, prog_name="flakeproxy", standalone_mode=False)
    except FlakeproxyError as e:
        click.echo(visible(escape_surrogates(f"error: {e}")), err=True)
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        click.echo("error: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    sys.exit(0)
