"""A conversation as the reports show it: each turn's prompt and answer (or error), its latency, and the
faults that fired on it (from the journal entries of that turn), as plain text or HTML."""

from __future__ import annotations

from html import escape

from flakeproxy.results import CellResult, Episode, RunResult, TurnRecord
from flakeproxy.wire.record import FaultRecord, read_fault


def turn_faults(episode: Episode, turn: int) -> list[FaultRecord]:
    """The faults decided on the requests of this turn (applied or not)."""
    records = (read_fault(entry.get("fault")) for entry in episode.journal if entry.get("turn") == turn)
    return [r for r in records if r is not None]


def said_in(turn: TurnRecord) -> str:
    """The answer, the agent's error, or (a turn not sent: the conversation broke before it) why not."""
    if not turn.sent:
        return turn.error or "not sent"
    return f"agent error: {turn.error}" if turn.error else (turn.answer if turn.answer is not None else "(no answer)")


def _fault_text(fault: FaultRecord) -> str:
    return f"{fault.label}: {'applied' if fault.applied else 'not applied'}: {fault.describe()}"


def fault_lines(episode: Episode, turn: int) -> list[tuple[str, bool]]:
    """(text, applied) of each different fault of the turn, `x N` when the same one hit N requests (a retry loop
    under a rate limit is one line, not ten)."""
    counts: dict[tuple[str, bool], int] = {}
    for fault in turn_faults(episode, turn):
        key = (_fault_text(fault), bool(fault.applied))
        counts[key] = counts.get(key, 0) + 1
    return [(text + (f" x{n}" if n > 1 else ""), applied) for (text, applied), n in counts.items()]


def evidence(result: RunResult, cells: list[CellResult], limit: int) -> list[tuple[Episode, CellResult]]:
    """The conversations to show under failed cells, at most `limit`, each with the cell it is evidence for: only
    episodes the cell did not pass (a passing one is no evidence, whatever the cell's label). Those that FAILed
    a cell first, then those that errored; the first of each (invariant, conversation) before repeats, so the same
    conversation failing the same rule in every scenario does not crowd out a failure found elsewhere."""
    by_id = {e.id: e for e in result.episodes}
    first: list[tuple[Episode, CellResult]] = []
    repeats: list[tuple[Episode, CellResult]] = []
    seen: set[tuple[str, str]] = set()
    for outcome in ("fail", "error"):
        for cell in cells:
            for verdict in cell.verdicts:
                episode = by_id.get(verdict.episode)
                if verdict.outcome != outcome or episode is None or episode.transcript is None:
                    continue
                key = (cell.invariant, episode.prompt)
                (repeats if key in seen else first).append((episode, cell))
                seen.add(key)
    chosen: dict[str, tuple[Episode, CellResult]] = {}
    for episode, cell in [*first, *repeats]:
        if episode.id not in chosen and len(chosen) < limit:
            chosen[episode.id] = (episode, cell)
    return list(chosen.values())


def transcript_text(episode: Episode, cell: CellResult | None = None) -> str | None:
    """The conversation as plain text, one block per turn (None for a one-turn prompt); with `cell`, the header
    says which cell it did not pass."""
    if episode.transcript is None:
        return None
    why = "" if cell is None else f"; {'failed' if _outcome(cell, episode) == 'fail' else 'errored'} {_of(cell)}"
    lines = [f"conversation {episode.prompt!r} (episode {episode.id}, {episode.latency_ms:.0f} ms in all{why}):"]
    for turn in episode.transcript:
        lines.append(f"  turn {turn.turn} ({turn.latency_ms:.0f} ms)")
        lines.append(f"    user: {turn.prompt}")
        lines.append(f"    agent: {said_in(turn)}" if turn.sent else f"    {said_in(turn)}")
        lines += [f"    fault: {text}" for text, _ in fault_lines(episode, turn.turn)]
    return "\n".join(lines) + "\n"


def _outcome(cell: CellResult, episode: Episode) -> str | None:
    return next((v.outcome for v in cell.verdicts if v.episode == episode.id), None)


def _of(cell: CellResult) -> str:
    return f"{cell.invariant} in {cell.scenario}"


def transcript_html(episode: Episode, limit: int = 20_000) -> str | None:
    """The conversation as an HTML list, faults marked at their turn; every string escaped (None: one turn)."""
    if episode.transcript is None:
        return None

    def esc(text: str) -> str:
        return escape(text if len(text) <= limit else text[:limit] + "…", quote=True)

    items = []
    for turn in episode.transcript:
        marks = "".join(
            f'<br><span class="badge {"f-applied" if applied else "f-not"}">fault</span> {esc(text)}'
            for text, applied in fault_lines(episode, turn.turn)
        )
        said = (
            f'<span class="badge o-error">agent error</span> {esc(turn.error)}'
            if turn.error and turn.sent
            else esc(said_in(turn))
        )
        items.append(
            f'<li class="turn"><b>turn {turn.turn}</b> <span class="muted">{turn.latency_ms:.0f} ms</span>'
            f"<pre>user: {esc(turn.prompt)}</pre><pre>agent: {said}</pre>{marks}</li>"
        )
    return f'<ol class="transcript">{"".join(items)}</ol>'
