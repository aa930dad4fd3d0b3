"""Two runs' results.json compared cell by cell (`flakeproxy compare BASE CANDIDATE`): the counts each cell
contributes, and the comparison rendered for a terminal and for a pull request's comment.

A cell's counts are its judged replicas: `pass` and `fail` count, `error` and `not_applicable` do not (they say
nothing about how often the agent keeps the rule). A run without replicas gives each judged cell one replica.
"""

from __future__ import annotations

from flakeproxy.errors import ConfigError
from flakeproxy.judging.stats_compare import CellChange, Comparison, Counts, compare_runs
from flakeproxy.results import CellResult, RunResult
from flakeproxy.safe_text import visible

#: Exit codes of `flakeproxy compare`: the run codes, and 4 for "no regression shown, not enough to pass".
EXIT = {"pass": 0, "block": 1, "inconclusive": 4}


def cell_name(cell: CellResult) -> str:
    return f"{cell.invariant} x {cell.scenario}"


def cell_counts(cell: CellResult) -> Counts:
    outcomes = cell.replicas or [cell.outcome]
    judged = [o for o in outcomes if o in ("pass", "fail")]
    return Counts(passes=judged.count("pass"), replicas=len(judged))


def run_counts(result: RunResult, source: str) -> dict[str, Counts]:
    """Every cell's counts; a run that cannot be compared (unfinished, a shard, no cells) is a ConfigError."""
    if result.shard is not None:
        raise ConfigError(f"{source}: a shard's results; compare the merged run (flakeproxy merge) instead")
    if not result.complete:
        why = f" (interrupted by {result.interrupted_by})" if result.interrupted_by else ""
        raise ConfigError(f"{source}: an unfinished run{why}; compare two complete runs")
    if not result.cells:
        raise ConfigError(f"{source}: no judged cells (a replay or an empty run?); compare two contract runs")
    return {cell_name(c): cell_counts(c) for c in result.cells}


def compare_results(
    base: RunResult, candidate: RunResult, sources: tuple[str, str], confidence: float = 0.95, margin: float = 0.10
) -> Comparison:
    try:
        return compare_runs(run_counts(base, sources[0]), run_counts(candidate, sources[1]), confidence, margin)
    except ValueError as e:
        raise ConfigError(f"{sources[0]} vs {sources[1]}: {e}") from e


def _rate(c: Counts) -> str:
    return f"{c.passes}/{c.replicas}" + (f" ({c.passes / c.replicas:.0%})" if c.replicas else "")


def _row(c: CellChange) -> str:
    change = f"{c.change:+.0%} [{c.change_low:+.0%}, {c.change_high:+.0%}]"
    cell = visible(c.cell).replace("|", "\\|")
    return f"| {cell} | {_rate(c.base)} | {_rate(c.candidate)} | {change} | {c.p_adjusted:.3g} | {c.status} |"


def markdown(comparison: Comparison, sources: tuple[str, str]) -> str:
    """The comparison as Markdown for a pull request's comment: the verdict, its reason, a row per cell
    (regressions first), and the cells only one side has."""
    verdict = comparison.verdict.upper()
    lines = [
        f"## flakeproxy compare: {verdict}",
        "",
        visible(comparison.reason),
        "",
        f"Baseline `{visible(sources[0])}`, candidate `{visible(sources[1])}`; {comparison.confidence:.0%} Newcombe "
        f"intervals for the change, one-sided Fisher p Holm-adjusted (BLOCK at <= {comparison.alpha:g}), "
        f"non-inferiority margin {comparison.margin:g}.",
        "",
        "| cell | baseline | candidate | change [interval] | p (Holm) | status |",
        "|---|---|---|---|---|---|",
    ]
    order = {"regressed": 0, "inconclusive": 1, "non_inferior": 2}
    lines += [_row(c) for c in sorted(comparison.cells, key=lambda c: (order[c.status], c.p_adjusted, c.cell))]
    for title, names in (
        ("Only in the baseline (missing from the candidate)", comparison.only_in_base),
        ("Not judged in the candidate (only ERROR or n/a there)", comparison.not_judged_in_candidate),
        ("New in the candidate (not compared)", comparison.only_in_candidate),
        ("Not judged in the baseline (only ERROR or n/a there; not compared)", comparison.not_judged_in_base),
    ):
        if names:
            lines += ["", f"{title}: " + ", ".join(f"`{visible(n)}`" for n in names)]
    return "\n".join(lines) + "\n"


def terminal(comparison: Comparison) -> str:
    """A line per cell that did not stay within the margin, then the verdict line."""
    worth = [c for c in comparison.cells if c.status != "non_inferior"]
    lines = [
        f"  {c.status:<12} {visible(c.cell)}: {_rate(c.base)} -> {_rate(c.candidate)}, "
        f"change {c.change:+.0%} [{c.change_low:+.0%}, {c.change_high:+.0%}], p={c.p_adjusted:.3g}"
        for c in worth
    ]
    lines.append(f"compare: {comparison.verdict.upper()}: {visible(comparison.reason)}")
    return "\n".join(lines)
