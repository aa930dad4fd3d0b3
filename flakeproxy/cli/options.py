"""Options shared by several commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

config_option = click.option(
    "-c",
    "--config",
    "config_path",
    default="flakeproxy.yaml",
    show_default=True,
    envvar="FLAKEPROXY_CONFIG",
    type=click.Path(dir_okay=False),
    help="The flakeproxy.yaml to use (env: FLAKEPROXY_CONFIG).",
)


def record_option(what: str) -> Callable[[Any], Any]:
    """--record DIR: write replay session files into DIR; `what` says which (per episode, per cell)."""
    return click.option(
        "--record",
        metavar="DIR",
        type=click.Path(file_okay=False, path_type=Path),
        help=f"{what} Secrets are redacted as in the journal; flakeproxy replay run replays them.",
    )


def formats_option() -> Callable[[Any], Any]:
    """--format: the reports written next to results.json (default junit, html, md)."""
    from flakeproxy.reports import DEFAULT_FORMATS, described

    return click.option(
        "--format",
        "formats",
        default=",".join(DEFAULT_FORMATS),
        show_default=True,
        help=f"Reports to write next to results.json: a comma-separated list of {described()}, or none.",
    )


quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
