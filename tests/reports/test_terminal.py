"""The terminal report of a run that stopped early says nothing about the scenarios that never ran."""

from __future__ import annotations

from flakeproxy.reports.terminal import render
from flakeproxy.results import RunResult


def test_a_stopped_run_prints_no_fault_line_for_scenarios_that_did_not_run(demo: dict[str, RunResult]) -> None:
    """A new user's trial: exit 3 after the calm scenario printed `faults llm-rate-limited: decided 0, applied 0`
    for a scenario no episode of which ran. The engine's coverage of such a run lists every scenario, the ones
    that did not run with 0 episodes: those get no line."""
    full = demo["naive"]
    ran = set(full.scenarios[:2])
    coverage = [
        c if c.scenario in ran else c.model_copy(update={"episodes": 0, "decided": 0, "applied": 0, "faults": []})
        for c in full.coverage
    ]
    stopped = full.model_copy(
        update={
            "complete": False,
            "interrupted_by": "InfrastructureError: the agent died",
            "score": None,
            "coverage": coverage,
            "cells": [c for c in full.cells if c.scenario in ran],
            "episodes": [e for e in full.episodes if e.scenario in ran],
        }
    )
    said = [line.split(":")[0] for line in render(stopped).splitlines() if line.startswith("faults ")]
    chaos_that_ran = [c.scenario for c in full.coverage if c.chaos and c.scenario in ran]
    assert chaos_that_ran and said == [f"faults {name}" for name in chaos_that_ran]
