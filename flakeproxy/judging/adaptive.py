"""Adaptive replicas (`run.replicas: {min, max}`) in judging: the design a config asks for, and where each cell
stands by it (settled, or open and how many more replicas it needs). The rule itself, its looks, boundaries and
error guarantee are in stats_sequential; this module only reads cells and config (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.judging.stats_sequential import AdaptiveDesign, CellState, adaptive_design, adaptive_step
from flakeproxy.results import CellResult, Outcome


def design_of(config: FlakeproxyConfig) -> AdaptiveDesign | None:
    """The group-sequential rate rule of this config's adaptive replicas; None for a fixed run.replicas."""
    adaptive, scoring = config.run.adaptive, config.scoring
    if adaptive is None:
        return None
    assert scoring.min_pass_rate is not None  # the config's cross-check sees to it
    return adaptive_design(adaptive.min, adaptive.max, scoring.min_pass_rate, scoring.confidence, adaptive.every)


def replica_state(outcomes: Sequence[Outcome], design: AdaptiveDesign) -> CellState:
    """Where a cell stands from its judged replicas' outcomes in replica order (an error counts as not passed)."""
    return adaptive_step([o == "pass" for o in outcomes], design)


def cell_state(cell: CellResult, design: AdaptiveDesign) -> CellState | None:
    """None when the cell has no judged replica (n/a, or an ERROR no replica can change, like a fault that
    never applied): more replicas are not run for it."""
    return replica_state(cell.replicas, design) if cell.replicas else None


def open_cells(cells: Sequence[CellResult], design: AdaptiveDesign) -> list[tuple[CellResult, int]]:
    """The cells still open, each with how many more judged replicas it needs before its next look."""
    out = []
    for cell in cells:
        state = cell_state(cell, design)
        if state is not None and not state.settled:
            out.append((cell, state.need))
    return out
