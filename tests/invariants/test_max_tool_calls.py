"""max_tool_calls: each tool target at most max calls; LLM calls are not tool calls."""

from __future__ import annotations

from typing import Any

import pytest

from tests.invariants.journals import llm, tool
from tests.invariants.spend_judge import judge

JOURNAL = [tool(1), llm(2, 10, 1), tool(3), tool(4, "news"), tool(5), llm(6, 10, 1)]  # quotes 3, news 1


@pytest.mark.parametrize(
    ("spec", "outcome", "reason"),
    [
        ({"max": 3}, "pass", "at most 3 calls per target (quotes; max 3)"),
        ({"max": 2}, "fail", "quotes: 3 calls, more than 2"),
        ({"max": 1, "targets": ["news"]}, "pass", "at most 1 call per target (news; max 1)"),
        ({"max": 1, "targets": ["n*", "q*"]}, "fail", "quotes: 3 calls, more than 1"),
        ({"max": 1, "targets": ["web_search"]}, "not_applicable", "no call to web_search in this episode"),
    ],
)
def test_max_tool_calls(spec: dict[str, Any], outcome: str, reason: str) -> None:
    verdict = judge({"type": "max_tool_calls", **spec}, JOURNAL)
    assert (verdict.outcome, verdict.reason) == (outcome, reason)


def test_evidence_counts_every_target() -> None:
    assert judge({"type": "max_tool_calls", "max": 2}, JOURNAL).evidence == {"calls": {"quotes": 3, "news": 1}}
