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


def _conversation(id_: str, scenario: str, prompt: str, card: bool) -> dict[str, Any]:
    said = "It was paid with card 4111 1111 1111 1111." if card else "Order 2077 is processing."
    turns = [{"turn": n, "prompt": f"{prompt} turn {n}", "answer": said if n == 2 else "ok"} for n in (1, 2, 3)]
    return {"id": id_, "scenario": scenario, "prompt": prompt, "prompt_index": 1, "label": id_, "transcript": turns}


def _cell(invariant: str, scenario: str, verdicts: dict[str, str]) -> dict[str, Any]:
    rows = [{"episode": e, "prompt": "p", "outcome": o, "reason": o} for e, o in verdicts.items()]
    worst = "fail" if "fail" in verdicts.values() else "pass"
    return {"invariant": invariant, "type": "t", "scenario": scenario, "severity": "critical", "when": "always",
            "outcome": worst, "reason": worst, "episodes": list(verdicts), "verdicts": rows}  # fmt: skip


def test_failed_cells_show_the_conversations_that_failed_them_first() -> None:
    """A new user's trial: no-card-number fails in three scenarios on one conversation (e3, e6, e9: the card read
    out), while the other conversation of its cells passes it (e2, e5, e8); the one failure chaos found,
    honest-when-orders-fail in orders-malformed (e14, e15), came last. The terminal (3) showed e2, e3, e5, passing
    ones under the failed cell's label, and not e14; summary.md (5) neither. Now: the evidence, the first of each
    (invariant, conversation) first."""
    from flakeproxy.reports import render
    from flakeproxy.results import RunResult

    scenarios = ["no-chaos", "llm-429", "stream-cut", "orders-malformed"]
    episodes, cells = [], []
    for i, scenario in enumerate(scenarios[:3]):
        passing, failing = f"e{3 * i + 2}", f"e{3 * i + 3}"
        episodes += [
            _conversation(passing, scenario, "followup", False),
            _conversation(failing, scenario, "card", True),
        ]
        cells.append(_cell("no-card-number", scenario, {passing: "pass", failing: "fail"}))
    episodes += [_conversation("e14", "orders-malformed", "followup", False)]
    episodes += [_conversation("e15", "orders-malformed", "card", False)]
    cells.append(_cell("honest-when-orders-fail", "orders-malformed", {"e14": "fail", "e15": "fail"}))
    result = RunResult.model_validate({
        "flakeproxy_version": "t", "versions": {}, "config_path": "c.yaml", "config_sha256": "0", "contract": "c",
        "seed": 0, "started_at": "t", "finished_at": "t", "complete": True, "scenarios": scenarios,
        "invariants": ["no-card-number", "honest-when-orders-fail"], "cells": cells, "episodes": episodes,
    })  # fmt: skip
    terminal = render(result, "terminal")
    shown = [line.split("(episode ")[1].split(",")[0] for line in terminal.splitlines() if "(episode " in line]
    assert shown == ["e3", "e14", "e15"], terminal
    assert "(episode e14, 0 ms in all; failed honest-when-orders-fail in orders-malformed):" in terminal
    summary = render(result, "md")
    folded = [line.split("episode ")[1].split(" ")[0] for line in summary.splitlines() if "Conversation of" in line]
    assert folded == ["e3", "e14", "e15", "e6", "e9"], summary  # then the repeats; never e2, e5, e8 (passed)
    assert "Conversation of episode e14 (failed honest-when-orders-fail in orders-malformed)" in summary


def test_a_turn_not_sent_is_shown_as_not_sent_not_as_an_agent_error() -> None:
    """The conversation broke at turn 1 (no reply): turn 2 was never asked, so no 'agent:' said anything."""
    from flakeproxy.reports.markdown import _conversation

    why = "not sent: turn 1 got no reply (agent timed out after 400 ms), so the conversation stopped there"
    turns = [
        TurnRecord(turn=1, prompt="p1", error="agent timed out after 400 ms", latency_ms=400.0),
        TurnRecord(turn=2, prompt="p2", error=why, sent=False),
    ]
    episode = Episode(id="e1", scenario="s", prompt="c", prompt_index=0, label="l", transcript=turns, error=why)
    text = (transcript_text(episode) or "").splitlines()
    assert text[2:] == ["    user: p1", "    agent: agent error: agent timed out after 400 ms", "  turn 2 (0 ms)",
                        "    user: p2", f"    {why}"]  # fmt: skip
    html = transcript_html(episode) or ""
    assert html.count("agent error</span>") == 1 and f"agent: {why}" in html
    from flakeproxy.results import CellResult

    cell = CellResult(invariant="i", type="t", scenario="s", severity="high", when="always", outcome="error", reason="")
    assert f"2. **user** p2<br>{why}" in "\n".join(_conversation(episode, cell))
