"""The HTML report's detail: per cell its verdicts (prompt, answer, reason, evidence) and faults, and per
episode the timeline of its requests from the journal. Every string from the run is escaped here."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from flakeproxy.reports import facts
from flakeproxy.reports.html_spans import span_tree
from flakeproxy.reports.transcript import transcript_html
from flakeproxy.results import CellResult, Episode, EpisodeVerdict, RunResult
from flakeproxy.wire.record import FaultRecord, read_fault

MAX_TEXT = 20_000


def esc(value: Any) -> str:
    text = str(value)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"… ({len(text) - MAX_TEXT} more characters in results.json)"
    return escape(text, quote=True)


def outcome_badge(outcome: str) -> str:
    return f'<span class="badge o-{esc(outcome)}">{esc(facts.OUTCOME_WORD.get(outcome, outcome))}</span>'


def fault_badge(fault: FaultRecord) -> str:
    cls, word = ("f-applied", "applied") if fault.applied else ("f-not", "not applied")
    if fault.applied and fault.context_attack and fault.reached_model is False:
        cls, word = "f-not", "did not reach the model"
    return f'<span class="badge {cls}">{word}</span> <code>{esc(fault.label)}</code>: {esc(fault.describe())}'


def cell_anchor(index: int) -> str:
    return f"cell-{index}"


def episode_anchors(result: RunResult) -> dict[str, str]:
    return {e.id: f"ep-{n}" for n, e in enumerate(result.episodes)}


def _kv(rows: list[tuple[str, str]]) -> str:
    return '<dl class="kv">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _answer(episode: Episode | None) -> str:
    if episode is None:
        return '<span class="muted">not in results.json (interrupted run)</span>'
    if episode.error:
        return f'<span class="badge o-error">agent error</span> {esc(episode.error)}'
    if episode.answer is None:
        return '<span class="muted">no answer</span>'
    return f"<pre>{esc(episode.answer)}</pre>"


def _verdict(v: EpisodeVerdict, episode: Episode | None, anchors: dict[str, str]) -> str:
    link = f'<a href="#{anchors[v.episode]}">{esc(v.episode)}</a>' if v.episode in anchors else esc(v.episode)
    rows = [
        ("episode", f"{link} · replica {v.replica} · {outcome_badge(v.outcome)}"),
        ("prompt", f"<pre>{esc(v.prompt)}</pre>"),
        ("answer", _answer(episode)),
        ("reason", esc(v.reason)),
    ]
    conversation = transcript_html(episode) if episode is not None else None
    if conversation is not None:
        rows[1:3] = [("conversation", conversation)]
    if v.evidence:
        evidence = json.dumps(v.evidence, indent=2, ensure_ascii=False, default=str)
        rows.append(("evidence", f"<pre>{esc(evidence)}</pre>"))
    return f'<div class="verdict-box">{_kv(rows)}</div>'


def cell_detail(result: RunResult, index: int, cell: CellResult, anchors: dict[str, str]) -> str:
    episodes = {e.id: e for e in facts.episodes_of(result, cell)}
    meta = [
        ("rule", f"<code>{esc(cell.type)}</code> · severity {esc(cell.severity)} · when {esc(cell.when)}"),
        ("reason", esc(cell.reason)),
        ("score", f"{cell.score:.2f} · agent time {facts.cell_seconds(result, cell):.2f} s"),
    ]
    if cell.faults_injected:
        meta.append(("faults applied", "<br>".join(fault_badge(f) for f in cell.faults_injected)))
    else:
        meta.append(("faults applied", '<span class="muted">none</span>'))
    if cell.replicas:
        flaky = ' <span class="badge retry">flaky</span>' if cell.flaky else ""
        meta.append(
            (
                "replicas",
                " ".join(outcome_badge(r) for r in cell.replicas)
                + f"{flaky} · pass@k {cell.pass_at_k} · pass^k {cell.pass_hat_k}"
                + escape(facts.rate_interval(cell, " ·")),
            )
        )
    verdicts = "".join(_verdict(v, episodes.get(v.episode), anchors) for v in cell.verdicts)
    opened = " open" if cell.outcome in ("fail", "error", "inconclusive") else ""
    return (
        f'<details class="cell" id="{cell_anchor(index)}"{opened}><summary>{outcome_badge(cell.outcome)} '
        f"<h3>{esc(cell.invariant)}</h3> <span class=muted>in</span> <b>{esc(cell.scenario)}</b></summary>"
        f'<div class="body">{_kv(meta)}{verdicts}</div></details>'
    )


def _latency(ms: Any) -> str:
    """A request's latency, or a muted dash when none was measured (its answer had not ended when read)."""
    return f"{float(ms):.0f}" if ms is not None else '<span class="muted" title="not measured">-</span>'


def _request_row(entry: dict[str, Any], start: float, retries: set[int]) -> str:
    offset = (float(entry.get("started_at") or start) - start) * 1000
    status = entry.get("status")
    error = entry.get("error")
    status_text = esc(status) if status is not None else '<span class="muted">none</span>'
    if error:
        status_text += f"<br><small>{esc(error)}</small>"
    fault = read_fault(entry.get("fault"))
    retry = ' <span class="badge retry">retry</span>' if int(entry.get("seq", -1)) in retries else ""
    return (
        f"<tr><td>{esc(entry.get('seq', ''))}</td><td class=num>+{offset:.0f}</td>"
        f"<td>{esc(facts.target_of(entry))}</td>"
        f"<td><code>{esc(entry.get('method', ''))} {esc(facts.path_of(entry))}</code>{retry}</td>"
        f"<td>{status_text}</td><td class=num>{_latency(entry.get('latency_ms'))}</td>"
        f"<td>{fault_badge(fault) if fault else ''}</td></tr>"
    )


def episode_detail(episode: Episode, anchor: str) -> str:
    journal = sorted(episode.journal, key=lambda e: float(e.get("started_at") or 0))
    start = float(journal[0].get("started_at") or 0) if journal else 0.0
    retries = facts.retry_seqs(episode)
    rows = "".join(_request_row(entry, start, retries) for entry in journal)
    table = (
        '<div class="scroll"><table class="timeline"><thead><tr><th>#</th><th>start ms</th><th>target</th>'
        "<th>request</th><th>status</th><th>latency ms</th><th>fault</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
        if rows
        else '<p class="muted">No request went through the proxy in this episode.</p>'
    )
    scenario = esc(episode.scenario) if episode.scenario is not None else "calm baseline"
    applied, decided = len(episode.faults()), len(episode.faults(applied=None))
    marks = f' <span class="badge f-applied">{applied} fault{"s" * (applied != 1)} applied</span>' if applied else ""
    if decided > applied:
        marks += f' <span class="badge f-not">{decided - applied} not applied</span>'
    if episode.error:
        marks += ' <span class="badge o-error">agent error</span>'
    if retries:
        marks += f' <span class="badge retry">{len(retries)} retr{"ies" if len(retries) != 1 else "y"}</span>'

    conversation = transcript_html(episode)
    said = [("conversation", conversation)] if conversation else [("answer", _answer(episode))]
    meta = [
        ("prompt", f"<pre>{esc(episode.prompt)}</pre>"),
        *said,
        ("latency", f"{episode.latency_ms:.0f} ms · {len(journal)} requests · {len(retries)} retries"),
    ]
    if episode.unattributed:
        meta.append(("unattributed", f"{episode.unattributed} requests could not be tied to this episode"))
    if episode.traceparent:
        meta.append(("trace", f"<code>{esc(episode.traceparent.split('-')[1])}</code>"))
    tree = span_tree(episode)  # the agent's own spans beside the journal, when it exported them (proxy.otlp)
    table = f'<div class="side">{table}{tree}</div>' if tree else table
    return (
        f'<details class="cell" id="{anchor}"><summary><h3>{esc(episode.id)}</h3> <b>{scenario}</b> '
        f'<span class="muted">prompt {episode.prompt_index + 1} · replica {episode.replica} · '
        f"{esc(episode.purpose)}</span>{marks}</summary>"
        f'<div class="body">{_kv(meta)}{table}</div></details>'
    )
