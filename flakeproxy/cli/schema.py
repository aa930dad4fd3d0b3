"""`flakeproxy schema`: the JSON Schema of the config, for editors."""

from __future__ import annotations

import json

import click

from flakeproxy.schema import config_schema


@click.command()
@click.option("--indent", default=2, show_default=True, help="Spaces per indent level (0 = one line).")
def schema(indent: int) -> None:
    """Print the JSON Schema of flakeproxy.yaml (version "2.0").

    \b
    Point your editor at it, e.g. for the YAML language server:
      flakeproxy schema > flakeproxy.schema.json
      # yaml-language-server: $schema=./flakeproxy.schema.json
    """
    click.echo(json.dumps(config_schema(), indent=indent or None, sort_keys=False))
