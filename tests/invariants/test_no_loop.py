"""no_loop: the same tool call (same target and arguments) at most max times in an episode."""

from __future__ import annotations

import json
from typing import Any

import pytest

from flakeproxy.invariants.no_loop import call_key
from tests.invariants.journals import llm, mcp, tool
from tests.invariants.spend_judge import judge

QUOTE = "http://127.0.0.1:8702/v1/quotes?symbol=AAPL"
OTHER = "http://127.0.0.1:8702/v1/quotes?symbol=MSFT"
# a naive agent on a tool outage: the same request again and again, with LLM calls between
LOOP = [tool(i, "quotes", url=QUOTE) if i % 2 else llm(i, 100, 10) for i in range(1, 12)]  # 6 identical calls
VARIED = [tool(1, url=QUOTE), tool(2, url=OTHER), tool(3, url=QUOTE), tool(4, url=OTHER)]


@pytest.mark.parametrize(
    ("spec", "journal", "outcome", "reason"),
    [
        ({}, LOOP, "fail", f"the same call to quotes made 6 times, more than 3: call #1 (GET {QUOTE})"),
        ({"max": 6}, LOOP, "pass", f"no call made more than 6 times (at most 6: quotes call #1 (GET {QUOTE}))"),
        ({"max": 2}, VARIED, "pass", "no call made more than 2 times (at most 2"),
        ({"max": 1}, VARIED, "fail", "the same call to quotes made 2 times, more than 1"),
        ({"max": 1, "targets": ["news"]}, LOOP, "not_applicable", "no call to news in this episode"),
        ({"max": 1}, [llm(1, 10, 1), llm(2, 10, 1)], "not_applicable", "no call to * in this episode"),
        # MCP: the JSON-RPC id changes with every call; the tool and its arguments make the call
        (
            {"max": 2},
            [mcp(i, "web_search", {"q": "AAPL", "n": 3}, rid=i) for i in range(1, 4)],
            "fail",
            "the same call to web_search made 3 times, more than 2",
        ),
        (
            {"max": 1},
            [mcp(1, "web_search", {"q": "AAPL"}, 1), mcp(2, "web_search", {"q": "MSFT"}, 2)],
            "pass",
            "no call made more than 1 time (at most 1",
        ),
    ],
)
def test_no_loop(spec: dict[str, Any], journal: list[dict[str, Any]], outcome: str, reason: str) -> None:
    verdict = judge({"type": "no_loop", **spec}, journal)
    assert (verdict.outcome, verdict.reason[: len(reason)]) == (outcome, reason)


def post(seq: int, body: str) -> dict[str, Any]:
    return tool(seq, body=body, method="POST")


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (post(1, '{"symbol": "AAPL", "n": 1}'), post(2, '{"n":1,"symbol":"AAPL"}'), True),
        (post(1, '{"symbol": "AAPL"}'), post(2, '{"symbol": "MSFT"}'), False),
        (post(1, "symbol=AAPL"), post(2, "symbol=AAPL"), True),
        (tool(1, method="GET"), tool(2, method="DELETE"), False),
        (mcp(1, "get_quote", {"s": "A"}, 7), mcp(2, "get_quote", {"s": "A"}, 8), True),
        (mcp(1, "get_quote", {"s": "A"}, 7), mcp(2, "get_news", {"s": "A"}, 8), False),
        (
            post(1, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
            post(2, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})),
            True,
        ),
    ],
)
def test_what_makes_two_calls_the_same(a: dict[str, Any], b: dict[str, Any], same: bool) -> None:
    assert (call_key(a) == call_key(b)) is same
