"""What an episode spent, read from its journal: which entries are LLM calls, sums that know what they miss."""

from __future__ import annotations

from flakeproxy.invariants.spend import is_llm_call, llm_calls, spend_usd, tokens, tool_calls
from tests.invariants.journals import PRICING, llm, llm_error, llm_unknown, tool


def test_llm_calls_carry_usage_and_tool_calls_do_not() -> None:
    journal = [tool(3), llm(2, 10, 5), tool(1, "news"), llm(4, 20, 5)]
    assert [e["seq"] for e in llm_calls(journal)] == [2, 4]
    assert not is_llm_call({**tool(1), "usage": None})
    assert {t: [e["seq"] for e in calls] for t, calls in tool_calls(journal).items()} == {"news": [1], "quotes": [3]}
    assert list(tool_calls(journal, ["n*"])) == ["news"]


def test_a_sum_is_exact_or_says_which_call_it_misses() -> None:
    exact = tokens([llm(1, 100, 20), llm_error(2), llm(3, 300, 40)], "total")
    assert (exact.known, exact.calls, exact.exact) == (460, 3, True)
    assert tokens([llm(1, 100, 20)], "input").known == 100
    partial = tokens([llm(1, 100, 20), llm_unknown(2)], "output")
    assert (partial.known, partial.exact) == (20, False)
    cut = "the stream was cut before [DONE] and reported no usage"
    assert partial.unknown == [f"call #2 (POST http://127.0.0.1:8701/v1/chat/completions): {cut}"]


def test_cost_prices_each_call_by_the_model_its_answer_names() -> None:
    usd = spend_usd([llm(1, 1_000_000, 100_000), llm_error(2), llm(3, 10, 10, model="o3")], PRICING)
    assert usd.known == 3.5 and usd.unpriced == ["o3"] and not usd.exact
