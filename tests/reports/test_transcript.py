"""A conversation's faults in the transcript: the same fault on ten requests of a turn (a retry loop under a rate
limit) is one line with its count, not ten (a new user's finding); different faults stay apart."""

from __future__ import annotations

from typing import Any

from flakeproxy.reports.transcript import fault_lines, transcript_html, transcript_text
from flakeproxy.results import Episode, TurnRecord


def _fault(turn: int, applied: bool = True, kind: str = "rate_limit", index: int = 0) -> dict[str, Any]:
    return {
        "scenario": "s", "section": "llm_faults", "index": index, "kind": kind, "turn": turn, "applied": applied,
        "effect": "replied 429" if applied else None, "not_applied_reason": None if applied else "no call",
        "settled": True,
    }  # fmt: skip


def test_the_same_fault_on_many_requests_of_a_turn_is_one_line_with_its_count() -> None:
    journal = [{"seq": i, "turn": 2, "fault": _fault(2)} for i in range(10)]
    journal += [{"seq": 10, "turn": 2, "fault": _fault(2, kind="error", index=1)}, {"seq": 11, "turn": 1}]
    turns = [TurnRecord(turn=n, prompt=f"p{n}", answer=f"a{n}", latency_ms=5.0) for n in (1, 2)]
    episode = Episode(id="e1", scenario="s", prompt="c", prompt_index=0, label="l", journal=journal, transcript=turns)
    lines = fault_lines(episode, 2)
    assert [(text.split(":")[0], text.endswith(" x10"), applied) for text, applied in lines] == [
        ("llm_faults[0] rate_limit", True, True),
        ("llm_faults[1] error", False, True),
    ]
    assert fault_lines(episode, 1) == []
    text = transcript_text(episode) or ""
    assert text.count("fault:") == 2 and "x10" in text
    html = transcript_html(episode) or ""
    assert html.count(">fault</span>") == 2 and "x10" in html
