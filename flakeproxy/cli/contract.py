"""`flakeproxy contract ...`: the contract commands."""

from __future__ import annotations

import click

from flakeproxy.cli.options import config_option
from flakeproxy.config import load_config
from flakeproxy.contract import plan_contract


@click.group()
def contract() -> None:
    """Run, validate and score a behavioral contract across the chaos matrix."""


@contract.command("validate")
@config_option
def validate_contract(config_path: str) -> None:
    """Validate the config and check it holds a contract and a non-empty chaos matrix."""
    plan = plan_contract(load_config(config_path), config_path)
    click.echo(
        f"{config_path}: contract {plan.name!r} is valid: {plan.invariants} invariants x "
        f"{plan.scenarios} scenarios = {plan.cells} cells ({plan.not_applicable} not applicable by `when`)"
    )
