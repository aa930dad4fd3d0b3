"""max_llm_calls: every LLM request counts, errors and retries included."""

from __future__ import annotations

from typing import Any

import pytest

from tests.invariants.journals import llm, llm_error, llm_unknown, tool
from tests.invariants.spend_judge import judge


@pytest.mark.parametrize(
    ("max_calls", "journal", "outcome", "reason"),
    [
        (3, [llm(1, 10, 1), tool(2), llm_error(3), llm_unknown(4)], "pass", "3 LLM calls (max 3)"),
        (2, [llm(1, 10, 1), tool(2), llm_error(3), llm_unknown(4)], "fail", "3 LLM calls, more than 2"),
        (1, [llm(1, 10, 1)], "pass", "1 LLM call (max 1)"),
        (1, [tool(1), tool(2)], "not_applicable", "no LLM call in this episode"),
    ],
)
def test_max_llm_calls(max_calls: int, journal: list[dict[str, Any]], outcome: str, reason: str) -> None:
    verdict = judge({"type": "max_llm_calls", "max": max_calls}, journal)
    assert (verdict.outcome, verdict.reason) == (outcome, reason)
