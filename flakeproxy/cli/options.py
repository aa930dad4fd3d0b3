"""Options shared by several commands."""

from __future__ import annotations

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
