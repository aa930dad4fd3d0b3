"""Two runs' results.json compared cell by cell (`flakeproxy compare BASE CANDIDATE`): the counts each cell
contributes, and the comparison rendered for a terminal and for a pull request's comment.

A cell's counts are its judged replicas: `pass` and `fail` count, `error` and `not_applicable` do not (they say
nothing about how often the agent keeps the rule). A run without replicas gives each judged cell one replica.

The comparison answers one question, did the candidate regress against the baseline; it does not say whether the
candidate passes. A candidate whose own verdict is not PASS (a baseline that already leaks makes every later leak
"no regression") leads the output: "compare: PASS vs the baseline, but the candidate itself FAILs: ...". The exit
code stays the comparison's; a gate takes the worse of it and the run's own (action.yml does).
"""

from __future__ import annotations

from flakeproxy.errors import ConfigError
from flakeproxy.judging.stats_compare import SEVERITY_RANK, CellChange, Comparison, Counts, compare_runs, needed
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


def severities(base: RunResult, candidate: RunResult) -> dict[str, str]:
    """Each cell's severity, the more severe of the two runs' (a contract may have raised or lowered it)."""
    out: dict[str, str] = {}
    for cell in [*base.cells, *candidate.cells]:
        name, known = cell_name(cell), out.get(cell_name(cell))
        if known is None or SEVERITY_RANK.get(cell.severity, 9) < SEVERITY_RANK.get(known, 9):
            out[name] = cell.severity
    return out


def compare_results(
    base: RunResult, candidate: RunResult, sources: tuple[str, str], confidence: float = 0.95, margin: float = 0.10
) -> Comparison:
    try:
        counts = (run_counts(base, sources[0]), run_counts(candidate, sources[1]))
        comparison = compare_runs(*counts, confidence, margin, severities(base, candidate))
    except ValueError as e:
        raise ConfigError(f"{sources[0]} vs {sources[1]}: {e}") from e
    verdict = candidate.ci.verdict if candidate.ci is not None else candidate.score and candidate.score.verdict
    problems = own_problems(candidate, counts[0]) if verdict not in (None, "PASS") else ()
    return comparison.model_copy(update={"candidate_verdict": verdict, "candidate_problems": problems})


def own_problems(result: RunResult, base: dict[str, Counts]) -> tuple[str, ...]:
    """Why a run does not PASS on its own, one short line each: its critical cells that failed, could not be judged
    or are INCONCLUSIVE (with their replicas, and the baseline's where it has the cell), then its other reasons."""
    what = {"fail": "fails", "error": "could not be judged", "inconclusive": "is INCONCLUSIVE"}
    out = []
    for cell in (c for c in result.cells if c.severity == "critical" and c.outcome in what):
        counts, name = cell_counts(cell), cell_name(cell)
        seen = f"{counts.passes}/{counts.replicas} replicas passed" if cell.replicas else ""
        if name in base and base[name].replicas and cell.replicas:
            seen += f"; the baseline {base[name].passes}/{base[name].replicas}"
        out.append(
            f"critical {cell.invariant} {what[cell.outcome]} in {cell.scenario}" + (f" ({seen})" if seen else "")
        )
    score = result.score.reasons if result.score is not None else []
    gates = result.score.inconclusive if result.score is not None else []  # a gate (not critical) INCONCLUSIVE
    others = [*score, *(g for g in gates if "keeps the run from PASS" in g and not g.startswith("critical "))]
    others += result.ci.reasons if result.ci is not None else []
    return tuple(out + [r for r in others if not r.startswith(("critical invariant ", "the contract failed"))])


def _rate(c: Counts) -> str:
    return f"{c.passes}/{c.replicas}" + (f" ({c.passes / c.replicas:.0%})" if c.replicas else "")


def _status(c: CellChange, margin: float) -> str:
    """The status, and for an inconclusive drop larger than the margin what would decide it."""
    return f"{c.status}: {needed(c)}" if c.status == "inconclusive" and c.change < -margin else c.status


def _row(c: CellChange, margin: float) -> str:
    change = f"{c.change:+.0%} [{c.change_low:+.0%}, {c.change_high:+.0%}]"
    cell = visible(c.cell).replace("|", "\\|")
    return (
        f"| {cell} | {c.severity or '-'} | {_rate(c.base)} | {_rate(c.candidate)} | {change} | {c.p_adjusted:.3g} "
        f"| {_status(c, margin)} |"
    )


def headline(comparison: Comparison) -> str:
    """'PASS' (the comparison's verdict), or, when the candidate itself does not PASS, that first:
    'PASS vs the baseline, but the candidate itself FAILs'."""
    verdict, own = comparison.verdict.upper(), comparison.candidate_verdict
    if own in (None, "PASS"):
        return verdict
    joined = "and" if comparison.verdict == "block" else "but"
    return f"{verdict} vs the baseline, {joined} the candidate itself {'FAILs' if own == 'FAIL' else 'is INCONCLUSIVE'}"


#: The most of a candidate's own problems the terminal's headline names (the Markdown lists them all).
NAMED = 3


def _own(comparison: Comparison) -> str:
    """': PROBLEM; PROBLEM (and N more)' after the headline, or '' when the candidate passes."""
    problems = comparison.candidate_problems
    if not problems:
        return ""
    more = f" (and {len(problems) - NAMED} more)" if len(problems) > NAMED else ""
    return ": " + "; ".join(problems[:NAMED]) + more


def markdown(comparison: Comparison, sources: tuple[str, str]) -> str:
    """The comparison as Markdown for a pull request's comment: the verdict (led by the candidate's own when it
    does not PASS, with why), its reason, a row per cell by concern (regressions, then drops: the most severe and
    largest first), and the cells only one side has."""
    own = [f"- {visible(p)}" for p in comparison.candidate_problems]
    if comparison.candidate_verdict not in (None, "PASS"):
        problem = "FAILs" if comparison.candidate_verdict == "FAIL" else "is INCONCLUSIVE"
        own = [f"**The candidate itself {problem}** (its own run, whatever the baseline did):", "", *own, ""]
    lines = [
        f"## flakeproxy compare: {headline(comparison)}",
        "",
        *own,
        ("Against the baseline: " if own else "") + visible(comparison.reason),
        "",
        f"Baseline `{visible(sources[0])}`, candidate `{visible(sources[1])}`; {comparison.confidence:.0%} Newcombe "
        f"intervals for the change, one-sided Fisher p Holm-adjusted (BLOCK at <= {comparison.alpha:g}), "
        f"non-inferiority margin {comparison.margin:g}.",
        "",
        "| cell | severity | baseline | candidate | change [interval] | p (Holm) | status |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [_row(c, comparison.margin) for c in comparison.cells]  # by concern: regressions, then drops
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
    """A line per cell that regressed or dropped without staying within the margin, by concern (the most severe
    and largest drops first, with what would decide an inconclusive one); one line counting the other open cells
    (no drop seen, too few replicas to rule one out); one naming the cells it could not compare (new in the candidate,
    or not judged in the baseline); then the verdict line (when the candidate itself does not
    PASS: the comparison's reason on a line of its own, and the verdict line led by the candidate's own verdict)."""
    worth = [c for c in comparison.cells if c.status == "regressed" or (c.status == "inconclusive" and c.change < 0)]
    lines = []
    for c in worth:
        severity = f" [{c.severity}]" if c.severity else ""
        decide = f"; {needed(c)}" if c.status == "inconclusive" and c.change < -comparison.margin else ""
        lines.append(
            f"  {c.status:<12} {visible(c.cell)}{severity}: {_rate(c.base)} -> {_rate(c.candidate)}, "
            f"change {c.change:+.0%} [{c.change_low:+.0%}, {c.change_high:+.0%}], p={c.p_adjusted:.3g}{decide}"
        )
    still = [c for c in comparison.cells if c.status == "inconclusive" and c.change >= 0]
    if still:
        widest = min(c.change_low for c in still)
        lines.append(
            f"  inconclusive {len(still)} cell(s) with no drop seen, but too few replicas to rule out one of more than "
            f"{comparison.margin:g} (change intervals down to {widest:+.0%}); --markdown or --json lists every cell"
        )
    unseen = [*comparison.only_in_candidate, *comparison.not_judged_in_base]  # a new FAIL among them: said here too
    if unseen:
        more = f" (and {len(unseen) - NAMED} more)" if len(unseen) > NAMED else ""
        lines.append(
            f"  not compared {len(unseen)} cell(s) new in the candidate or not judged in the baseline (its own "
            f"verdicts stand): {', '.join(visible(n) for n in unseen[:NAMED])}{more}"
        )
    if comparison.candidate_verdict not in (None, "PASS"):  # it leads: the comparison cannot show it
        lines.append(f"  vs the baseline: {visible(comparison.reason)}")
        lines.append(f"compare: {headline(comparison)}{visible(_own(comparison))}")
    else:
        lines.append(f"compare: {comparison.verdict.upper()}: {visible(comparison.reason)}")
    return "\n".join(lines)
