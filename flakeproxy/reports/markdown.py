"""A short Markdown summary for $GITHUB_STEP_SUMMARY or a PR comment: the verdict, the score, the cells that
failed or errored with their reasons, and the chaos scenarios that injected nothing."""

from __future__ import annotations

import html
import re

from flakeproxy.reports import facts, spend
from flakeproxy.reports.excerpts import cited
from flakeproxy.reports.transcript import evidence, fault_lines, said_in
from flakeproxy.results import CellResult, Episode, RunResult
from flakeproxy.safe_text import visible

MAX_REASON = 300
MAX_ROWS = 50
MAX_CONVERSATIONS = 5  # conversations shown turn by turn under the problems
# Inline Markdown that could format, link or break a table cell; `$` starts GitHub's math.
_MARKDOWN = re.compile(r"([\\`*_\[\]|~$])")


def escape(text: object, limit: int = MAX_REASON) -> str:
    """Text from the agent, upstream or config as inert Markdown: control characters shown, HTML escaped (& < >),
    Markdown punctuation backslashed, one line, at most `limit` characters."""
    one_line = visible(" ".join(str(text).split()))  # ESC, BEL... from a config or an answer, shown as \x1b
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    return _MARKDOWN.sub(r"\\\1", html.escape(one_line, quote=False))


def _headline(result: RunResult) -> list[str]:
    verdict = facts.verdict(result)
    icon = {"PASS": "✅", "FAIL": "❌", "INCONCLUSIVE": "❔"}.get(verdict, "⚠️")
    number, label = facts.headline(result)
    lines = [
        f"## {icon} flakeproxy: {escape(facts.title(result), 120)}: **{verdict}**",
        "",
        f"{label[:1].upper() + label[1:]} **{number}** · seed `{result.seed}` · "
        f"{len(result.scenarios)} scenarios x {len(result.invariants)} invariants · "
        f"{result.agent_invocations} agent invocations",
    ]
    if result.score is not None and result.score.composite:
        parts = ", ".join(f"{escape(k, 60)} {v.composite:.2f}" for k, v in result.score.composite.items())
        lines.append(f"\nComposite score by scenario: {parts}")
    note = facts.interruption(result)
    if note:
        lines += ["", f"> **{facts.interruption_title(result)}** {escape(note)}"]
    shard = facts.shard_note(result)
    if shard:
        lines += ["", f"> **Not judged.** {escape(shard)}"]
    gap = facts.cannot_fail(result)
    if gap:
        lines += ["", f"> **This gate cannot fail.** {escape(gap)}."]
    return lines


def _problems(result: RunResult) -> list[str]:
    cells = facts.problems(result)
    if not cells:
        return []
    lines = ["", "| | invariant | scenario | severity | reason |", "|---|---|---|---|---|"]
    for cell in cells[:MAX_ROWS]:
        said = cited(cell)  # what the check read in the answer, escaped as every agent text
        answer = f"<br>answer ({escape(said.where(), 40)}): “{escape(said.text, 160)}”" if said is not None else ""
        lines.append(
            f"| {facts.OUTCOME_WORD[cell.outcome]} | {escape(cell.invariant, 80)} | {escape(cell.scenario, 80)} "
            f"| {escape(cell.severity, 20)} | {escape(cell.reason)}{answer} |"
        )
    if len(cells) > MAX_ROWS:
        lines.append(f"\n…and {len(cells) - MAX_ROWS} more in report.html.")
    return lines


def _conversation(episode: Episode, cell: CellResult) -> list[str]:
    """One conversation as a folded numbered list: each turn's prompt and answer, its faults under it."""
    assert episode.transcript is not None
    verdict = next((v.outcome for v in cell.verdicts if v.episode == episode.id), "fail")
    how = "failed" if verdict == "fail" else "errored"
    title = f"{escape(episode.id, 20)} ({how} {escape(cell.invariant, 80)} in {escape(cell.scenario, 80)})"
    lines = ["", f"<details><summary>Conversation of episode {title}</summary>", ""]
    for turn in episode.transcript:
        said = f"**agent** {escape(said_in(turn))} ({turn.latency_ms:.0f} ms)" if turn.sent else escape(said_in(turn))
        lines.append(f"{turn.turn}. **user** {escape(turn.prompt)}<br>{said}")
        lines += [f"   - fault {escape(text)}" for text, _ in fault_lines(episode, turn.turn)]
    return [*lines, "", "</details>"]


def _conversations(result: RunResult) -> list[str]:
    """The conversations that failed (then errored) a cell, turn by turn with their faults (folded): the evidence,
    never one that passed the cell (transcript.evidence chooses them)."""
    chosen = evidence(result, facts.problems(result), MAX_CONVERSATIONS)
    return [line for episode, cell in chosen for line in _conversation(episode, cell)]


def _pillars(result: RunResult) -> list[str]:
    if result.ci is None:
        return []
    lines = ["", "| pillar | score | weight | what ran |", "|---|---|---|---|"]
    for p in result.ci.pillars:
        score = "absent" if not p.ran else ("not scored" if p.score is None else f"{p.score:.1f}%")
        weight = f"{p.weight:g} -> {p.share:.3g}" if p.ran else f"{p.weight:g} (spread)"
        lines.append(f"| {p.name} | {score} | {weight} | {escape(p.summary)} |")
    if result.ci.redistribution:
        lines += ["", escape(result.ci.redistribution)]
    bad = [(p.name, i) for p in result.ci.pillars for i in p.items if i.outcome in ("fail", "error")]
    if bad:
        lines += ["", "**Answers that did not hold**", ""]
        lines += [f"- {name} {escape(i.label, 60)}: {escape(i.reason)}" for name, i in bad[:10]]
    if result.ci.reasons:
        lines += ["", "**Why ci failed**", ""]
        lines += [f"- {escape(reason)}" for reason in result.ci.reasons]
    return lines


def _table(head: list[str], header: str, rows: list[list[str]], keep_last: bool = False) -> list[str]:
    """A Markdown table under `head`: at most MAX_ROWS rows (keep_last: and the last, a total), then how many more."""
    shown = rows if len(rows) <= MAX_ROWS + keep_last else [*rows[:MAX_ROWS], *(rows[-1:] if keep_last else [])]
    columns = header.count("|") - 1
    lines = [*head, header, "|---" * columns + "|", *("| " + " | ".join(r) + " |" for r in shown)]
    if len(rows) > len(shown):
        lines.append(f"\n…and {len(rows) - len(shown)} more in report.html.")
    return lines


def _replays(result: RunResult) -> list[str]:
    """The replayed sessions: each one's outcome, what was served and why."""
    if result.replay is None or not result.replay.sessions:
        return []
    rows = [
        [facts.OUTCOME_WORD[s.outcome], escape(s.session, 80), str(s.served), escape(s.reason)]
        for s in result.replay.sessions
    ]
    head = ["", f"**Replay** {escape(result.replay.summary)}", ""]
    return _table(head, "| | session | served | reason |", rows)


def _rates(result: RunResult) -> list[str]:
    """Cells judged over replicas: their pass rate with its interval, pass@k and pass^k."""
    cells = facts.replicated(result)
    if not cells:
        return []
    rows = [
        [
            facts.OUTCOME_WORD[c.outcome],
            escape(c.invariant, 80),
            escape(c.scenario, 80),
            f"{c.replicas.count('pass')}/{len(c.replicas)}",
            facts.rate_interval(c, "").removeprefix(" pass rate "),
            str(c.pass_at_k),
            str(c.pass_hat_k),
        ]
        for c in cells
    ]
    head = ["", f"**Pass rates over replicas** (interval: {facts.interval_name(cells)})", ""]
    return _table(head, "| | invariant | scenario | passed | pass rate [interval] | pass@k | pass^k |", rows)


def _spend(result: RunResult) -> list[str]:
    """The scenarios' spend (tokens, cost, amplification over calm), folded: a PR comment stays short."""
    if not spend.shown(result):
        return []
    rows = [[escape(c, 80) for c in r] for r in spend.rows(result)]
    head = ["", "<details><summary>Spend per scenario</summary>", ""]
    table = _table(head, "| " + " | ".join(spend.HEADER) + " |", rows, keep_last=True)  # the whole run's row stays
    said = "".join(f" {escape(c[:1].upper() + c[1:])}." for c in spend.caveats(result))
    return [*table, "", f"Prices as of {escape(result.pricing_as_of or 'unknown', 20)}.{said}", "", "</details>"]


def render(result: RunResult) -> str:
    lines = (
        _headline(result)
        + _pillars(result)
        + _replays(result)
        + _problems(result)
        + _conversations(result)
        + _rates(result)
        + _spend(result)
    )
    if result.score is not None and result.score.reasons and not result.score.passed:
        lines += ["", "**Why it failed**", ""]
        lines += [f"- {escape(reason)}" for reason in result.score.reasons[:MAX_ROWS]]
    if result.score is not None and result.score.inconclusive:
        lines += ["", "**Inconclusive** (too few replicas to tell; left out of the score like n/a):", ""]
        lines += [f"- {escape(line)}" for line in result.score.inconclusive[:MAX_ROWS]]
    silent = [c.scenario for c in facts.coverage(result) if c.injected_nothing]
    if silent:
        lines += [
            "",
            "**Scenarios that injected nothing** (no fault changed what the agent received): "
            + ", ".join(escape(s, 80) for s in silent),
        ]
    unread = [c.scenario for c in facts.coverage(result) if c.reached_model == 0]
    if unread:
        lines += [
            "",
            "**Context attacks that never reached the model** (the agent did not pass the tool's answer to its "
            "model; checks that need it are n/a): " + ", ".join(escape(s, 80) for s in unread),
        ]
    flaky = [c for c in result.cells if c.flaky]
    if flaky:
        lines += [
            "",
            "**Flaky cells** (replicas disagree): "
            + ", ".join(f"{escape(c.invariant, 80)} in {escape(c.scenario, 80)}" for c in flaky),
        ]
    if result.warnings:
        lines += ["", "<details><summary>Warnings</summary>", ""]
        lines += [f"- {escape(w)}" for w in result.warnings[:MAX_ROWS]]
        lines += ["", "</details>"]
    lines += ["", "Full report: `report.html`; machine-readable: `results.json`, `junit.xml`."]
    return "\n".join(lines) + "\n"
