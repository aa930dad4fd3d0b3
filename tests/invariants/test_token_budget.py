"""token_budget: the episode's input, output or total tokens against max; n/a when a count is unknown."""

from __future__ import annotations

from typing import Any

import pytest

from tests.invariants.journals import llm, llm_error, llm_unknown, tool
from tests.invariants.spend_judge import judge

CUT = "the stream was cut before message_delta: its output tokens are unknown"
CALLS = [llm(1, 1000, 200), tool(2), llm_error(3), llm(4, 1500, 300)]  # 2500 in, 500 out, 3000 total


@pytest.mark.parametrize(
    ("spec", "journal", "outcome", "reason"),
    [
        ({"max": 3000}, CALLS, "pass", "3000 total tokens in 3 LLM calls (max 3000)"),
        ({"max": 2999}, CALLS, "fail", "3000 total tokens in 3 LLM calls, more than 2999"),
        ({"max": 2500, "tokens": "input"}, CALLS, "pass", "2500 input tokens in 3 LLM calls (max 2500)"),
        ({"max": 499, "tokens": "output"}, CALLS, "fail", "500 output tokens in 3 LLM calls, more than 499"),
        ({"max": 10}, [tool(1)], "not_applicable", "no LLM call in this episode: no tokens to count"),
        ({"max": 10}, [], "not_applicable", "no LLM call in this episode: no tokens to count"),
        # a call whose usage is unknown: n/a while the known calls stay within max ...
        (
            {"max": 5000},
            [*CALLS, llm_unknown(5)],
            "not_applicable",
            "3000 total tokens counted, but call #5 (POST http://127.0.0.1:8701/v1/chat/completions): "
            "the stream was cut before [DONE] and reported no usage",
        ),
        # ... a fail once they alone exceed it
        ({"max": 2000}, [*CALLS, llm_unknown(5)], "fail", "at least 3000 total tokens in 4 LLM calls, more than 2000"),
        # a cut Anthropic stream: message_start gave the input, the output is unknown
        ({"max": 100, "tokens": "input"}, [llm_unknown(1, CUT, 90)], "pass", "90 input tokens in 1 LLM call (max 100)"),
        ({"max": 100, "tokens": "output"}, [llm_unknown(1, CUT, 90)], "not_applicable", "0 output tokens counted"),
    ],
)
def test_token_budget(spec: dict[str, Any], journal: list[dict[str, Any]], outcome: str, reason: str) -> None:
    verdict = judge({"type": "token_budget", **spec}, journal)
    assert (verdict.outcome, verdict.reason[: len(reason)]) == (outcome, reason)


def test_evidence() -> None:
    verdict = judge({"type": "token_budget", "max": 2999}, CALLS)
    assert verdict.evidence == {"tokens": 3000, "kind": "total", "llm_calls": 3, "unknown": []}
