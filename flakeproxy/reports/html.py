"""One self-contained HTML file a person reads: the verdict and score, the invariant x scenario matrix as a
coloured grid linking to each cell's detail, faults decided vs applied per scenario, every episode's
requests. No script, no network: a Content-Security-Policy of default-src 'none' says so to the browser."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flakeproxy.reports import facts
from flakeproxy.reports.html_detail import cell_anchor, cell_detail, episode_anchors, episode_detail, esc
from flakeproxy.reports.html_spend import section as _spend
from flakeproxy.reports.html_style import CSS
from flakeproxy.results import RunResult

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
Section = Callable[[RunResult], str]


def _header(result: RunResult) -> str:
    verdict = facts.verdict(result)
    number, label = facts.headline(result)
    finished = f" · finished {esc(result.finished_at)}" if result.finished_at else ""
    versions = ", ".join(f"{esc(k)} {esc(v)}" for k, v in sorted(result.versions.items()))
    top = (
        f'<header class="top v-{verdict}"><div class="verdict">{verdict}</div>'
        f'<div class="score"><b>{esc(number)}</b><span>{esc(label)}</span></div>'
        f'<div class="title"><h1>{esc(facts.title(result))}</h1>'
        f'<p class="meta">seed {result.seed} · config {esc(result.config_path)} '
        f"(sha256 {esc(result.config_sha256[:12])})<br>started {esc(result.started_at)}{finished}<br>"
        f"flakeproxy {esc(result.flakeproxy_version)} ({versions})</p></div></header>"
    )
    note = facts.interruption(result)
    banner = f'<p class="banner"><b>{facts.interruption_title(result)}</b> {esc(note)}</p>' if note else ""
    shard = facts.shard_note(result)
    banner += f'<p class="banner"><b>Not judged.</b> {esc(shard)}</p>' if shard else ""
    gap = facts.cannot_fail(result)
    banner += f'<p class="banner"><b>This gate cannot fail.</b> {esc(gap)}.</p>' if gap else ""
    if facts.replay_only(result):
        return (
            top
            + banner
            + (
                '<p class="intro">flakeproxy sent each recorded session\'s input to the agent under test while the '
                "proxy served the session's recorded responses instead of the real LLM and tools, and judged each "
                f"answer with the contract's invariants. {result.agent_invocations} agent invocations.</p>"
            )
        )
    intro = (
        f'<p class="intro">flakeproxy ran the agent under test through {len(result.scenarios)} scenarios that '
        f"break its LLM, tool or MCP calls on purpose, and judged what it did against {len(result.invariants)} "
        f"rules (invariants). Each square of the grid is one rule in one scenario: click it for the prompts, "
        f"the answers, the reason and the requests. {result.agent_invocations} agent invocations, isolation "
        f"{esc(result.isolation)}.</p>"
    )
    return top + banner + intro


def _reasons(result: RunResult) -> str:
    reasons = [*(result.ci.reasons if result.ci else []), *(result.score.reasons if result.score else [])]
    unsettled = result.score.inconclusive if result.score else []
    out = ""
    if reasons:
        items = "".join(f"<li>{esc(r)}</li>" for r in reasons)
        out += f'<h2 id="why">Why it failed</h2><ul class="reasons">{items}</ul>'
    if unsettled:
        items = "".join(f"<li>{esc(r)}</li>" for r in unsettled)
        out += (
            '<h2 id="inconclusive">Inconclusive: too few replicas to tell</h2><p class="muted">Left out of the '
            "score like n/a; a critical one keeps the run from PASS (exit 4). More replicas can settle them.</p>"
            f'<ul class="reasons">{items}</ul>'
        )
    return out


def _pillars(result: RunResult) -> str:
    """flakeproxy ci: one row per pillar, how absent weights were spread, the failing answers."""
    if result.ci is None:
        return ""
    rows, bad = [], []
    for p in result.ci.pillars:
        score = "absent" if not p.ran else ("not scored" if p.score is None else f"{p.score:.1f}%")
        share = f"{p.weight:g} &rarr; {p.share:.3g}" if p.ran else f"{p.weight:g} (spread)"
        types = ", ".join(f"{esc(k)} {v:.0f}%" for k, v in p.by_type.items())
        rows.append(
            f"<tr><th scope=row>{esc(p.name)}</th><td class=num>{score}</td><td class=num>{share}</td>"
            f"<td>{esc(p.summary)}{f'<br><small>{types}</small>' if types else ''}</td></tr>"
        )
        bad += [
            f"<li><b>{esc(p.name)}</b> {esc(i.label)} ({esc(i.episode)}): {esc(i.outcome.upper())}: "
            f"{esc(i.reason)}</li>"
            for i in p.items
            if i.outcome in ("fail", "error")
        ]
    note = f'<p class="intro">{esc(result.ci.redistribution)}</p>' if result.ci.redistribution else ""
    failing = f'<h3>Answers that did not hold</h3><ul class="reasons">{"".join(bad[:100])}</ul>' if bad else ""
    return (
        '<h2 id="pillars">Pillars</h2><div class="scroll"><table><thead><tr><th>pillar</th><th>score</th>'
        f"<th>weight</th><th>what ran</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>{note}{failing}"
    )


def _replays(result: RunResult) -> str:
    """The replayed sessions: outcome, source, what the proxy served, the requests no recording matched."""
    if result.replay is None or not result.replay.sessions:
        return ""
    rows = []
    for s in result.replay.sessions:
        unmatched = "".join(f"<br><small>unmatched: {esc(u)}</small>" for u in s.unmatched[:20])
        same = {True: "as recorded", False: "differs", None: ""}[s.answer_matches_recording]
        rows.append(
            f'<tr><td><span class="badge o-{esc(s.outcome)}">{esc(facts.OUTCOME_WORD[s.outcome])}</span></td>'
            f"<th scope=row>{esc(s.session)}</th><td>{esc(s.source)}</td><td class=num>{s.served}</td>"
            f"<td class=num>{s.unused}</td><td>{esc(same)}</td><td>{esc(s.reason)}{unmatched}</td></tr>"
        )
    score = "not scored" if result.replay.score is None else f"{result.replay.score:.1f}%"
    return (
        f'<h2 id="replay">Replay</h2><p class="intro">Replay score {esc(score)} {esc(result.replay.verdict)}: '
        f'{esc(result.replay.summary)}</p><div class="scroll"><table><thead><tr><th></th><th>session</th>'
        "<th>source</th><th>served</th><th>unused</th><th>answer</th><th>reason</th></tr></thead><tbody>"
        f"{''.join(rows)}</tbody></table></div>"
    )


def _matrix(result: RunResult) -> str:
    if facts.replay_only(result) and not result.cells:
        return ""  # a replay run: its sessions are the table
    index = {(c.invariant, c.scenario): n for n, c in enumerate(result.cells)}
    head = "".join(f'<th scope="col">{esc(s)}</th>' for s in result.scenarios)
    rows = []
    for inv in result.invariants:
        tds = []
        for scenario in result.scenarios:
            n = index.get((inv, scenario))
            if n is None:
                tds.append('<td><span class="o-missing" title="not run">not run</span></td>')
                continue
            cell = result.cells[n]
            word = facts.OUTCOME_WORD[cell.outcome] + (" ~" if cell.flaky else "")
            tds.append(
                f'<td><a class="o-{cell.outcome}" href="#{cell_anchor(n)}" title="{esc(cell.reason)}">{word}</a></td>'
            )
        rows.append(f'<tr><th scope="row" class="inv">{esc(inv)}</th>{"".join(tds)}</tr>')
    legend = "".join(
        f'<span class="badge o-{o}">{w}</span>'
        for o, w in (
            ("pass", "PASS"),
            ("fail", "FAIL"),
            ("error", "ERROR: could not judge"),
            ("inconclusive", "INCONCLUSIVE: too few replicas to tell"),
            ("not_applicable", "n/a"),
        )
    )
    counts = result.score.counts if result.score is not None else {}
    tally = " · ".join(f"{facts.OUTCOME_WORD.get(k, k)} {v}" for k, v in counts.items())
    return (
        f'<h2 id="matrix">Invariants x scenarios</h2><div class="legend">{legend}'
        f'<span class="muted">{esc(tally)}</span></div>'
        f'<div class="scroll"><table class="matrix"><thead><tr><th class="inv">invariant</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _scenarios(result: RunResult) -> str:
    composite = result.score.composite if result.score is not None else {}
    rows = []
    for cov in facts.coverage(result):
        note = '<span class="badge o-error">injected nothing</span>' if cov.injected_nothing else ""
        reasons = sorted({r for f in cov.faults for r in f.not_applied_reasons})
        detail = "".join(f"<br><small>not applied: {esc(r)}</small>" for r in reasons[:3])
        unread = sorted({r for f in cov.faults for r in f.not_delivered_reasons})
        detail += "".join(f"<br><small>did not reach the model: {esc(r)}</small>" for r in unread[:3])
        part = composite.get(cov.scenario)
        comp = "" if part is None else f"{part.composite:.2f}" + ("" if part.passed else " (failed)")
        if part is not None and part.gate_failed:
            comp += f"<br><small>gate: {esc(', '.join(part.gate_failed))}</small>"
        faults = ", ".join(
            f"{esc(f.section)}[{f.index}] {esc(f.kind)} {f.applied}/{f.decided}"
            + (f", reached the model {f.reached_model}/{f.applied}" if f.reached_model is not None else "")
            + "".join(f", turn {t} x{n}" for t, n in sorted(f.applied_turns.items()))  # conversations
            for f in cov.faults
        )
        rows.append(
            f"<tr><th scope=row>{esc(cov.scenario)}</th><td>{'chaos' if cov.chaos else 'calm'}</td>"
            f"<td class=num>{cov.episodes}</td><td class=num>{cov.decided}</td><td class=num>{cov.applied}</td>"
            f"<td>{faults or '<span class=muted>none</span>'}{detail} {note}</td>"
            f"<td class=num>{comp}</td><td class=num>{facts.retries_seen(result, cov.scenario)}</td></tr>"
        )
    if not rows:
        return ""
    return (
        '<h2 id="scenarios">Faults per scenario: decided vs applied</h2><p class="intro">A fault counts as applied '
        "only when it changed what the agent received; a context attack on a tool's answer also says how often its "
        "payload reached the agent's model (a later LLM request carried it).</p>"
        '<div class="scroll"><table><thead><tr><th>scenario</th><th>kind</th><th>episodes</th><th>decided</th>'
        "<th>applied</th><th>faults (applied/decided)</th><th>composite</th><th>retries</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _flaky(result: RunResult) -> str:
    rows = [
        f'<tr><th scope=row><a href="#{cell_anchor(n)}">{esc(c.invariant)}</a></th><td>{esc(c.scenario)}</td>'
        f"<td>{' '.join(esc(facts.OUTCOME_WORD[r]) for r in c.replicas)}</td>"
        f"<td class=num>{'' if c.pass_at_k is None else f'{c.pass_at_k:.2f}'}</td>"
        f"<td class=num>{'' if c.pass_hat_k is None else f'{c.pass_hat_k:.2f}'}</td></tr>"
        for n, c in enumerate(result.cells)
        if c.flaky
    ]
    if not rows:
        return ""
    return (
        '<h2 id="flaky">Flaky cells: replicas disagree (marked ~ in the grid)</h2><div class="scroll"><table>'
        "<thead><tr><th>invariant</th><th>scenario</th><th>replicas</th><th>pass@k</th><th>pass^k</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _cells(result: RunResult) -> str:
    if facts.replay_only(result) and not result.cells:
        return ""
    anchors = episode_anchors(result)
    order = {"fail": 0, "error": 1, "inconclusive": 2, "pass": 3}
    judged = [
        cell_detail(result, n, c, anchors)
        for n, c in sorted(enumerate(result.cells), key=lambda nc: order.get(nc[1].outcome, 3))
        if c.outcome != "not_applicable"
    ]
    skipped = [
        f'<li id="{cell_anchor(n)}"><b>{esc(c.invariant)}</b> in <b>{esc(c.scenario)}</b>: {esc(c.reason)}</li>'
        for n, c in enumerate(result.cells)
        if c.outcome == "not_applicable"
    ]
    out = '<h2 id="cells">Cells: failures first</h2>' + "".join(judged)
    if skipped:
        out += f'<h3 class="muted">Not applicable</h3><ul class="muted">{"".join(skipped)}</ul>'
    return out


def _episodes(result: RunResult) -> str:
    anchors = episode_anchors(result)
    if not result.episodes:
        return ""
    body = "".join(episode_detail(e, anchors[e.id]) for e in result.episodes)
    return f'<h2 id="episodes">Episodes: what the agent sent and received</h2>{body}'


def _warnings(result: RunResult) -> str:
    if not result.warnings:
        return ""
    return '<h2 id="warnings">Warnings</h2><ul>' + "".join(f"<li>{esc(w)}</li>" for w in result.warnings) + "</ul>"


SECTIONS: tuple[Section, ...] = (
    _header,
    _reasons,
    _pillars,
    _replays,
    _matrix,
    _scenarios,
    _spend,
    _flaky,
    _cells,
    _episodes,
    _warnings,
)


def render(result: RunResult, extra: Sequence[Section] = ()) -> str:
    """The page; `extra` sections (e.g. a later `ci` section per pillar) go after the built-in ones."""
    body = "".join(section(result) for section in (*SECTIONS, *extra))
    title = f"flakeproxy {facts.verdict(result)}: {facts.title(result)}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body><main>{body}"
        f"<footer>flakeproxy {esc(result.flakeproxy_version)} · results schema {esc(result.schema_version)} · "
        "generated from results.json, which holds everything shown here.</footer></main></body></html>\n"
    )
