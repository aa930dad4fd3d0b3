"""What a contract run will do, decided from the config alone."""

from __future__ import annotations

from dataclasses import dataclass

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.errors import ConfigError


@dataclass(frozen=True)
class ContractPlan:
    name: str
    invariants: int
    scenarios: int
    cells: int
    not_applicable: int


def plan_contract(config: FlakeproxyConfig, source: str = "flakeproxy.yaml") -> ContractPlan:
    """Check the config can run a contract (a contract, a non-empty matrix) and count its cells."""
    if config.contract is None:
        raise ConfigError(f"{source}: contract: missing; add a contract: section with name and invariants")
    if not config.matrix:
        raise ConfigError(
            f"{source}: chaos_matrix: missing; add at least one scenario, e.g. chaos_matrix: [{{name: no-chaos}}]"
        )
    invariants = config.contract.invariants
    cells = [(inv, s) for inv in invariants for s in config.matrix]
    not_applicable = sum(1 for inv, s in cells if not s.applies(inv.when))
    return ContractPlan(config.contract.name, len(invariants), len(config.matrix), len(cells), not_applicable)
