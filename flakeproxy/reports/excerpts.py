"""What a failed cell's check cited from the agent's answer: its evidence's `excerpt` (the text around what
matched, or the start of an answer that did not match), short and on one line, for the FAIL lines of the terminal
and summary.md (junit.xml and report.html show the whole evidence)."""

from __future__ import annotations

from dataclasses import dataclass

from flakeproxy.results import CellResult

#: The longest excerpt a FAIL line shows (the evidence keeps about 60 characters either side of a match).
MAX_EXCERPT = 140


@dataclass(frozen=True)
class Cited:
    episode: str
    turn: int | None
    text: str  # one line, at most MAX_EXCERPT characters; the agent's words, for the report to escape

    def where(self) -> str:
        """`e14, turn 2`: the episode (and a conversation's turn) it is from."""
        return self.episode + (f", turn {self.turn}" if self.turn is not None else "")


def cited(cell: CellResult) -> Cited | None:
    """The excerpt of the first failing episode's evidence; None when the check cited none (a traffic check, a
    canary named in the reason) or the cell did not fail."""
    if cell.outcome != "fail":
        return None
    for verdict in cell.verdicts:
        text = verdict.evidence.get("excerpt")
        if verdict.outcome != "fail" or not isinstance(text, str) or not text.strip():
            continue
        one = " ".join(text.split())
        turn = verdict.evidence.get("turn")
        short = one if len(one) <= MAX_EXCERPT else one[: MAX_EXCERPT - 1] + "…"
        return Cited(verdict.episode, turn if isinstance(turn, int) else None, short)
    return None
