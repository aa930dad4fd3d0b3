"""The HTML report's spend section (issue 25): per scenario, what its episodes spent, and an inline SVG bar chart
of each scenario's amplification over the calm runs (tokens, LLM calls, cost), with a line at 1x (calm)."""

from __future__ import annotations

from flakeproxy.reports import spend
from flakeproxy.reports.html_detail import esc
from flakeproxy.results import RunResult
from flakeproxy.results_spend import ScenarioSpend

MEASURES = (("tokens", "tokens", "#4c78a8"), ("llm_calls", "LLM calls", "#e45756"), ("cost", "cost", "#54a24b"))
WIDTH, LABEL_W, BAR_H, GAP = 720, 170, 12, 14


def _bars(row: ScenarioSpend, top: int, scale: float) -> str:
    plot = WIDTH - LABEL_W - 70
    out = [f'<text x="{LABEL_W - 8}" y="{top + BAR_H * 2}" text-anchor="end">{esc(row.scenario)}</text>']
    for i, (key, label, colour) in enumerate(MEASURES):
        value, y = row.amplification.get(key), top + i * BAR_H
        title = f"{row.scenario}: {label} {spend.factor(value) if value is not None else 'unknown'} the calm runs'"
        if value is None:
            out.append(f'<text x="{LABEL_W + 4}" y="{y + BAR_H - 2}" class="unknown">{esc(label)}: unknown</text>')
            continue
        w = max(1.0, plot * value / scale)
        out.append(
            f'<rect class="bar" data-scenario="{esc(row.scenario)}" data-measure="{key}" data-factor="{value:g}" '
            f'x="{LABEL_W}" y="{y}" width="{w:.1f}" height="{BAR_H - 2}" fill="{colour}"><title>{esc(title)}</title>'
            f'</rect><text x="{LABEL_W + w + 4:.1f}" y="{y + BAR_H - 2}">{value:g}x</text>'
        )
    return "".join(out)


def chart(rows: list[ScenarioSpend]) -> str:
    """The bar chart: one group of bars per scenario other than calm; '' when none has a factor."""
    rows = [r for r in rows if not r.calm and any(r.amplification.get(k) is not None for k, _, _ in MEASURES)]
    if not rows:
        return ""
    top_factor = max([1.0, *(v for r in rows for k, _, _ in MEASURES if (v := r.amplification.get(k)) is not None)])
    scale = top_factor * 1.1
    group = BAR_H * len(MEASURES) + GAP
    height = 30 + group * len(rows)
    one_x = LABEL_W + (WIDTH - LABEL_W - 70) / scale
    legend = "".join(
        f'<rect x="{LABEL_W + i * 110}" y="4" width="10" height="10" fill="{c}"></rect>'
        f'<text x="{LABEL_W + i * 110 + 14}" y="13">{esc(label)}</text>'
        for i, (_, label, c) in enumerate(MEASURES)
    )
    bars = "".join(_bars(r, 24 + n * group, scale) for n, r in enumerate(rows))
    return (
        f'<svg class="amplification" role="img" viewBox="0 0 {WIDTH} {height}" width="100%" '
        f'style="max-width:{WIDTH}px" font-size="11" fill="currentColor" '
        'aria-label="Amplification per scenario against the calm runs of the same prompts">'
        f"<title>Amplification per scenario against calm (1x: as much as the calm runs)</title>{legend}{bars}"
        f'<line class="calm" x1="{one_x:.1f}" x2="{one_x:.1f}" y1="20" y2="{height}" stroke="currentColor" '
        f'stroke-dasharray="4 3"></line><text x="{one_x + 3:.1f}" y="{height - 2}">1x calm</text></svg>'
    )


def section(result: RunResult) -> str:
    rows = spend.shown(result)
    if not rows:
        return ""
    head = "".join(f"<th>{esc(h)}</th>" for h in spend.HEADER)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{esc(c)}</td>" if i else f"<th scope=row>{esc(c)}</th>" for i, c in enumerate(r))
        + "</tr>"
        for r in spend.rows(result)
    )
    note = "".join(f" {c[:1].upper()}{c[1:]}." for c in spend.caveats(result))
    return (
        '<h2 id="spend">Spend per scenario: tokens, cost and amplification over calm</h2><p class="intro">'
        f"Read from the usage the providers reported on the wire; prices as of {esc(result.pricing_as_of or '?')}."
        f"{note}</p>{chart(rows)}"
        f'<div class="scroll"><table class="spend"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    )
