"""`flakeproxy validate`: check a config without running anything."""

from __future__ import annotations

import click

from flakeproxy.cli.options import config_option
from flakeproxy.config import FlakeproxyConfig, load_config
from flakeproxy.config.can_fail import validate_warnings


def summary(config: FlakeproxyConfig) -> str:
    parts = [
        f"agent {config.agent.type}" if config.agent else "no agent",
        f"{len(config.proxy.listeners)} listeners",
        f"{len(config.targets)} targets",
        f"{len(config.matrix)} scenarios",
        f"{len(config.contract.invariants) if config.contract else 0} invariants",
    ]
    if config.run.attribution == "slots":
        parts.append(f"{config.proxy.slots} slots (one episode each at a time)")
    elif config.run.concurrency > 1 and config.run.attribution != "none":
        parts.append(f"{config.run.concurrency} episodes at once (attribution: {config.run.attribution})")
    elif config.proxy.slots:  # a sidecar's config: it serves the slots a runner's run.attribution: slots uses
        parts.append(f"{config.proxy.slots} slots of listeners")
    return ", ".join(parts)


@click.command()
@config_option
def validate(config_path: str) -> None:
    """Validate a flakeproxy.yaml: keys, types, fault modes, invariants, and cross-references."""
    config = load_config(config_path)
    from flakeproxy.runner.telemetry import check_extras

    check_extras(config)  # what the run would stop on at its start: the otel extra missing
    for warning in validate_warnings(config):
        click.echo(f"warning: {warning}", err=True)
    replays = ""
    if config.replays is not None:  # its session files too: a broken one would fail ci and replay run (exit 2)
        from flakeproxy.runner.replay import check_replay, gather_sessions

        sessions = gather_sessions(config, config_path)
        check_replay(config, config_path, sessions)
        replays = f", {len(sessions)} replay session{'s' if len(sessions) != 1 else ''}"
    click.echo(f"{config_path}: valid ({summary(config)}{replays})")
