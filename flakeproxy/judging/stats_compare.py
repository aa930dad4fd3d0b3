"""Baseline vs candidate (`flakeproxy compare BASE CANDIDATE`): per-cell change in pass rate and a verdict.

Per cell (a cell present in both runs with replicas on both sides):
- the change cand - base with Newcombe's hybrid score interval (Newcombe 1998, method 10: built from the two
  Wilson intervals) at `confidence`, for display and for PASS;
- Fisher's exact test, conditional on the margins: the one-sided p-value for a regression (the candidate
  passes less) and the two-sided one (tables no more likely than the observed, exact integer arithmetic).

The verdict, with alpha = (1 - confidence) / 2 as in the rate rule:
- BLOCK when some cell's one-sided Fisher p-value, Holm-adjusted across the compared cells (Holm 1979:
  valid under any dependence, and cells of one scenario share episodes), is at or below alpha. Fisher's test
  is exact and conservative, so when nothing changed the chance of a BLOCK is at most alpha, however many
  cells there are.
- PASS when nothing is BLOCKed and every compared cell is non-inferior: the lower bound of its change is at
  or above -margin (default 0.10). PASS claims every cell at once; as an intersection-union test that needs
  no multiplicity correction (Berger 1982). Newcombe's interval is approximate (coverage close to nominal
  in Newcombe's evaluation), so PASS is as good as that approximation; BLOCK is exact.
- INCONCLUSIVE otherwise: no regression shown, but some cell could still have dropped by more than the
  margin, or a cell the baseline judged is missing from the candidate or not judged there (only ERROR or
  n/a replicas: it exists, but says nothing). A candidate's new cells are listed and do not count.

What would decide an inconclusive drop: for a cell whose pass rate dropped by more than the margin without
BLOCKing, `replicas_to_block` is the fewest replicas per side at which the same two pass rates (rounded to whole
passes) would BLOCK by the very test above: Fisher's one-sided p times the number of compared cells (Holm's
first and strictest step, so enough whatever the other cells show) at or below alpha. It is computed, not
approximated (a floating-point screen, each candidate confirmed by the exact test); it says what the observed
drop would need, not that the drop is real. Cells are listed by concern: regressions first, then the cells
whose pass rate dropped, most severe first and largest drop first, then the rest by severity.

Counts from adaptive runs (n chosen by the outcomes) are accepted, but the tests are then not exact; the
bench (bench/adaptive_sim.py) measures that case: fewer false BLOCKs than the bound, and less power.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import comb, exp, floor, lgamma, sqrt
from typing import Literal

from pydantic import Field

from flakeproxy.judging.stats import StatsModel, check_counts, check_level, percent, tail_alpha, wilson

Status = Literal["regressed", "non_inferior", "inconclusive"]
CompareVerdict = Literal["pass", "block", "inconclusive"]


class Counts(StatsModel):
    """One cell in one run: its passes of its judged replicas."""

    passes: int
    replicas: int


#: The most replicas per side `replicas_to_block` looks at; beyond it, "more than" this.
MOST_REPLICAS = 1000
#: Severities by concern (a cell without one comes last).
SEVERITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3}


class CellChange(StatsModel):
    """One cell, baseline vs candidate: the numbers a PR comment's row needs."""

    cell: str
    severity: str | None = None
    base: Counts
    candidate: Counts
    base_rate: float
    candidate_rate: float
    change: float  # candidate_rate - base_rate
    change_low: float  # Newcombe's interval for the change, at the comparison's confidence
    change_high: float
    p_regression: float  # Fisher, one-sided: the candidate passes less
    p_two_sided: float
    p_adjusted: float  # p_regression, Holm-adjusted across the compared cells
    status: Status
    replicas_to_block: int | None = Field(
        None,
        description="An inconclusive drop larger than the margin: the fewest replicas per side at which the same "
        f"pass rates would BLOCK (None otherwise, or when more than {MOST_REPLICAS} would be needed).",
    )


class Comparison(StatsModel):
    verdict: CompareVerdict
    reason: str
    confidence: float
    alpha: float
    margin: float
    cells: tuple[CellChange, ...]
    only_in_base: tuple[str, ...] = Field(description="Judged in the baseline, absent from the candidate (no PASS).")
    only_in_candidate: tuple[str, ...] = Field(description="New cells: listed, not compared, no effect on the verdict.")
    not_judged_in_candidate: tuple[str, ...] = Field(
        (), description="Judged in the baseline, only ERROR or n/a in the candidate (no PASS then)."
    )
    not_judged_in_base: tuple[str, ...] = Field(
        (), description="Judged in the candidate, only ERROR or n/a in the baseline: listed, not compared."
    )
    candidate_verdict: Literal["PASS", "FAIL", "INCONCLUSIVE"] | None = Field(
        None,
        description="The candidate run's own verdict (its contract, or flakeproxy ci's), which the comparison neither "
        "changes nor implies: a PASS vs the baseline says no regression was shown, not that the candidate passes. "
        "None when its results hold none.",
    )
    candidate_problems: tuple[str, ...] = Field(
        (), description="Why the candidate itself does not PASS, one line each (its critical cells first)."
    )


def fisher_exact(base: Counts, candidate: Counts) -> tuple[float, float]:
    """(one-sided p for a regression, two-sided p) of the 2x2 table base/candidate x pass/fail.

    Given the margins, X = the baseline's passes is hypergeometric; the one-sided p is P(X >= observed), the
    two-sided p sums the tables no more probable than the observed (as R's fisher.test and scipy)."""
    n1, n2, total_passes = base.replicas, candidate.replicas, base.passes + candidate.passes
    support = range(max(0, total_passes - n2), min(n1, total_passes) + 1)
    weight = {x: comb(total_passes, x) * comb(n1 + n2 - total_passes, n1 - x) for x in support}
    whole, observed = comb(n1 + n2, n1), weight[base.passes]
    one_sided = sum(w for x, w in weight.items() if x >= base.passes) / whole
    two_sided = sum(w for w in weight.values() if w <= observed) / whole
    return min(1.0, one_sided), min(1.0, two_sided)


def newcombe(base: Counts, candidate: Counts, confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe's hybrid score interval for candidate_rate - base_rate (method 10 of Newcombe 1998)."""
    p1, p2 = base.passes / base.replicas, candidate.passes / candidate.replicas
    w1, w2 = wilson(base.passes, base.replicas, confidence), wilson(candidate.passes, candidate.replicas, confidence)
    d = p2 - p1
    low = d - sqrt((p2 - w2.low) ** 2 + (w1.high - p1) ** 2)
    high = d + sqrt((w2.high - p2) ** 2 + (p1 - w1.low) ** 2)
    return max(-1.0, low), min(1.0, high)


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input's order."""
    m, running, adjusted = len(p_values), 0.0, [0.0] * len(p_values)
    for rank, i in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def _log_comb(n: int, k: int) -> float:
    return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)


def _p_regression_screen(base_passes: int, cand_passes: int, n: int) -> float:
    """fisher_exact's one-sided p for base_passes/n vs cand_passes/n (base ahead), in floating point: the terms
    P(X = x) for x from the observed up fall from the start (the observed is above the mean), so their sum stops
    once they vanish. A fast screen only; replicas_to_block confirms with the exact test."""
    passes, whole = base_passes + cand_passes, _log_comb(2 * n, n)
    total = 0.0
    for x in range(base_passes, min(n, passes) + 1):
        term = exp(_log_comb(passes, x) + _log_comb(2 * n - passes, n - x) - whole)
        total += term
        if term <= total * 1e-17:
            break
    return total


def replicas_to_block(base: Counts, candidate: Counts, cells: int, alpha: float) -> int | None:
    """The fewest replicas per side (from the larger side's count on, up to MOST_REPLICAS) at which the observed
    pass rates, rounded to whole passes, would BLOCK: Fisher's one-sided p times `cells` (Holm's strictest step:
    enough whatever the other cells show) at or below alpha. None when the candidate did not drop, or beyond."""
    p1, p2 = base.passes / base.replicas, candidate.passes / candidate.replicas
    if p2 >= p1:
        return None
    for n in range(max(base.replicas, candidate.replicas), MOST_REPLICAS + 1):
        b, c = floor(p1 * n + 0.5), floor(p2 * n + 0.5)
        if b <= c or _p_regression_screen(b, c, n) * cells > alpha * (1 + 1e-9):
            continue
        if fisher_exact(Counts(passes=b, replicas=n), Counts(passes=c, replicas=n))[0] * cells <= alpha:
            return n
    return None


def by_concern(cell: CellChange) -> tuple[int, int, int, float, str]:
    """Sort key: regressions first; then cells whose pass rate dropped, the most severe and the largest drop
    first; then the rest, by severity; by name last."""
    severity = SEVERITY_RANK.get(cell.severity or "", len(SEVERITY_RANK))
    return (cell.status != "regressed", cell.change >= 0, severity, cell.change, cell.cell)


def compare_runs(
    base: Mapping[str, Counts],
    candidate: Mapping[str, Counts],
    confidence: float = 0.95,
    margin: float = 0.10,
    severities: Mapping[str, str] | None = None,
) -> Comparison:
    """Every cell of both runs compared (`severities`: each cell's, to order them by concern), in that order,
    and the verdict PASS / BLOCK / INCONCLUSIVE with its reason."""
    check_level("confidence", confidence)
    check_level("margin", margin)
    for counts in (*base.values(), *candidate.values()):
        if counts.replicas:
            check_counts(counts.passes, counts.replicas)
    judged = {name for name, c in base.items() if c.replicas}
    offered = {name for name, c in candidate.items() if c.replicas}
    shared = sorted(judged & offered)
    if not shared:
        raise ValueError("the two runs share no cell with judged replicas: nothing to compare")
    alpha = tail_alpha(confidence, "two")
    tests = [fisher_exact(base[name], candidate[name]) for name in shared]
    adjusted = holm([one for one, _ in tests])
    levels = _Levels(confidence, alpha, margin, len(shared))
    changes = [
        _change(name, (base[name], candidate[name]), test, adj, levels, (severities or {}).get(name))
        for name, test, adj in zip(shared, tests, adjusted, strict=True)
    ]
    cells = tuple(sorted(changes, key=by_concern))
    missing, new = tuple(sorted(judged - set(candidate))), tuple(sorted(offered - set(base)))
    unjudged = tuple(sorted((judged - offered) & set(candidate)))
    verdict, reason = _verdict(cells, (missing, unjudged), alpha, margin, confidence)
    return Comparison(
        verdict=verdict,
        reason=reason,
        confidence=confidence,
        alpha=alpha,
        margin=margin,
        cells=cells,
        only_in_base=missing,
        only_in_candidate=new,
        not_judged_in_candidate=unjudged,
        not_judged_in_base=tuple(sorted((offered - judged) & set(base))),
    )


@dataclass(frozen=True)
class _Levels:
    confidence: float
    alpha: float
    margin: float
    compared: int  # the cells Holm adjusts over


def _change(
    name: str,
    counts: tuple[Counts, Counts],
    test: tuple[float, float],
    adjusted: float,
    levels: _Levels,
    severity: str | None,
) -> CellChange:
    (base, cand), margin = counts, levels.margin
    low, high = newcombe(base, cand, levels.confidence)
    status: Status = "regressed" if adjusted <= levels.alpha else "non_inferior" if low >= -margin else "inconclusive"
    base_rate, cand_rate = base.passes / base.replicas, cand.passes / cand.replicas
    large_drop = status == "inconclusive" and cand_rate - base_rate < -margin
    return CellChange(
        cell=name,
        severity=severity,
        base=base,
        candidate=cand,
        base_rate=base_rate,
        candidate_rate=cand_rate,
        change=cand_rate - base_rate,
        change_low=low,
        change_high=high,
        p_regression=test[0],
        p_two_sided=test[1],
        p_adjusted=adjusted,
        status=status,
        replicas_to_block=replicas_to_block(base, cand, levels.compared, levels.alpha) if large_drop else None,
    )


def _verdict(
    cells: tuple[CellChange, ...],
    lost: tuple[tuple[str, ...], tuple[str, ...]],
    alpha: float,
    margin: float,
    confidence: float,
) -> tuple[CompareVerdict, str]:
    """The verdict and its reason; `lost` is the baseline's judged cells (missing, not judged) in the candidate.
    What was not shown is not said to be true: "no regression shown", not "no cell regressed", unless PASS."""
    regressed = [c for c in cells if c.status == "regressed"]
    if regressed:
        worst = ", ".join(
            f"{c.cell} {c.base_rate:.2f} -> {c.candidate_rate:.2f} (p={c.p_adjusted:.2g})"
            for c in sorted(regressed, key=lambda c: c.p_adjusted)[:3]
        )
        more = f" and {len(regressed) - 3} more" if len(regressed) > 3 else ""
        test = f"Holm-adjusted one-sided Fisher p <= {alpha:g}"
        return "block", f"{len(regressed)} of {len(cells)} cells regressed ({test}): {worst}{more}"
    open_cells = [c for c in cells if c.status == "inconclusive"]
    missing, unjudged = lost
    if not open_cells and not missing and not unjudged:
        return "pass", (
            f"no cell regressed; all {len(cells)} cells within {margin:g} of the baseline "
            f"({percent(confidence)} Newcombe intervals)"
        )
    parts = []
    if open_cells:
        parts.append(f"{len(open_cells)} of {len(cells)} cells could have dropped by more than {margin:g}")
    if missing:
        parts.append(f"{len(missing)} baseline cells missing from the candidate")
    if unjudged:
        parts.append(f"{len(unjudged)} baseline cells not judged in the candidate (only ERROR or n/a there)")
    return "inconclusive", "no regression shown, but " + " and ".join(parts) + _drops(open_cells, margin)


def _drops(open_cells: list[CellChange], margin: float) -> str:
    """'; N dropped by more than the margin (...), the worst ...: what would decide it', or ''."""
    drops = [c for c in open_cells if c.change < -margin]
    if not drops:
        return ""
    worst = drops[0]  # the cells come by concern: the most severe, largest drop first
    return (
        f"; {len(drops)} dropped by more than {margin:g} (too few replicas to show it), the worst {worst.cell}"
        + (f" [{worst.severity}]" if worst.severity else "")
        + f" {worst.base_rate:.2f} -> {worst.candidate_rate:.2f}: {needed(worst)}"
    )


def needed(cell: CellChange) -> str:
    """What would decide an inconclusive drop: the replicas per side at which the same rates would BLOCK."""
    if cell.replicas_to_block is None:
        return f"the same rates would not BLOCK within {MOST_REPLICAS} replicas a side"
    return f"the same rates would BLOCK at {cell.replicas_to_block} replicas a side"
