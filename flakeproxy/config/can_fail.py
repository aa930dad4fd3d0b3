"""Can this run FAIL on what it judges? A CI gate whose contract cannot fail passes at 0%.

A contract run FAILs on what it judges only through a critical invariant (or a `gate: true` one) that fails
in a scenario where it applies, `scoring.min_resilience` (the resilience score, 0-100) or
`scoring.pass_threshold` (the composite score, 0-1). With none of them, a contract whose every cell fails
still PASSes at 0%: `validate` warns, and the run's verdict line says so. `flakeproxy ci` can also fail on
`scoring.min_overall` or `--min-score`. (A chaos scenario that injected nothing fails a run too, but that
judges the faults, not the agent; and so does an answer that repeated a secret value, judged by a check that
forbids content, but only an agent that leaks: no contract can count on it to fail.)
"""

from __future__ import annotations

from flakeproxy.config.model import FlakeproxyConfig
from flakeproxy.config.warnings import config_warnings

#: The fix, said once wherever a run cannot fail.
FIX = "mark the rules that must hold severity: critical, or set scoring.min_resilience (0-100, e.g. 80)"


def why_contract_cannot_fail(config: FlakeproxyConfig) -> str | None:
    """Why no judged outcome can make the contract FAIL, or None when something can (or there is no contract,
    or no matrix to run it in: that is an error of its own)."""
    if config.contract is None or not config.matrix:
        return None
    scoring = config.scoring
    if scoring.min_resilience is not None or scoring.pass_threshold is not None:
        return None
    for inv in config.contract.invariants:
        if (inv.severity == "critical" or inv.gate) and any(inv.judged_in(s) for s in config.matrix):
            return None
    return (
        "no invariant is severity: critical or gate: true (in a scenario where it applies), and scoring sets "
        "neither min_resilience nor pass_threshold"
    )


def why_ci_cannot_fail(config: FlakeproxyConfig, min_overall: float | None) -> str | None:
    """Why no judged outcome can make `flakeproxy ci` FAIL (min_overall: --min-score or scoring.min_overall)."""
    if min_overall is not None:
        return None
    if config.contract is not None:
        contract = why_contract_cannot_fail(config)
        return None if contract is None else f"{contract}, and no --min-score or scoring.min_overall is set"
    return "there is no contract, and no --min-score or scoring.min_overall is set"


def cannot_fail_warnings(config: FlakeproxyConfig) -> list[str]:
    """The warnings `validate` prints: the contract run, and ci's pillars without a contract."""
    contract = why_contract_cannot_fail(config)
    if contract is not None:
        return [
            f"contract.invariants: {contract}: no invariant can fail this run, so a contract whose every cell "
            f"fails still PASSes at 0%; {FIX}"
        ]
    pillars = config.chaos is not None or config.mutations is not None
    if config.contract is None and pillars and config.scoring.min_overall is None:
        return [
            "scoring.min_overall: not set and there is no contract: `flakeproxy ci` can fail only on an overall "
            "score below --min-score, so without it every answer may fail and ci still PASSes; set "
            "scoring.min_overall (0-100, e.g. 80) or add a contract with a critical invariant"
        ]
    return []


def validate_warnings(config: FlakeproxyConfig) -> list[str]:
    """What `validate` and `contract validate` print: every config warning, then whether the run can fail (a run
    does not repeat this one at its start: its verdict line says it)."""
    return config_warnings(config) + cannot_fail_warnings(config)
