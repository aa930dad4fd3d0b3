"""`flakeproxy ci` as terminal text: one line per pillar, how absent weights were spread, the overall."""

from __future__ import annotations

from flakeproxy.reports.facts import cannot_fail
from flakeproxy.results import RunResult


def render_ci(result: RunResult) -> str:
    ci = result.ci
    if ci is None:
        return f"incomplete run: {result.interrupted_by or 'stopped early'}"
    lines = []
    for p in ci.pillars:
        if not p.ran:
            lines.append(f"{p.name:<9} absent     {p.summary}")
            continue
        score = f"{p.score:5.1f}%" if p.score is not None else "  n/a "
        lines.append(f"{p.name:<9} {score}   weight {p.weight:g} -> {p.share:.3g}; {p.summary}")
        if p.by_type:
            lines.append("          by type: " + ", ".join(f"{k} {v:.0f}%" for k, v in p.by_type.items()))
        bad = [i for i in p.items if i.outcome in ("fail", "error")]
        for item in bad[:5]:
            lines.append(f"          {item.outcome.upper():<5} {item.label} ({item.episode}): {item.reason}")
        if len(bad) > 5:
            lines.append(f"          ... and {len(bad) - 5} more (results.json has them all)")
    if ci.redistribution:
        lines.append(f"weights: {ci.redistribution}")
    overall = f"{ci.overall:.1f}%" if ci.overall is not None else "n/a"
    minimum = f" (minimum {ci.min_overall:g})" if ci.min_overall is not None else ""
    gap = cannot_fail(result)
    lines.append(f"overall {overall}{minimum}  {ci.verdict}" + (f"; {gap}" if gap else ""))
    lines += [f"  - {reason}" for reason in ci.reasons]
    if ci.verdict == "INCONCLUSIVE" and result.score is not None:
        lines += [f"  ? {line}" for line in result.score.inconclusive]
    if not ci.passed:
        lines.append(f"reproduce: the same config with run.seed: {result.seed} sends the same mutations and faults")
    return "\n".join(lines)
