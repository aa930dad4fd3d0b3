from __future__ import annotations

import json

import pytest

from flakeproxy.wire.text import WordBudget, corrupt_arguments, cut_words, drift


@pytest.mark.parametrize(("text", "n", "out"), [("a b c d", 2, "a b"), ("  lead a b", 1, "  lead"), ("a", 0, "")])
def test_cut_words(text: str, n: int, out: str) -> None:
    assert cut_words(text, n) == out


def test_budget_spans_pieces() -> None:
    budget = WordBudget(3)
    assert [budget.take(p) for p in ("one ", "two three ", "four")] == ["one ", "two three", ""]
    assert budget.spent


@pytest.mark.parametrize(
    "pieces", [["AAPL", " trades", " at", " $1"], ["AAPL ", "trades\n\n", "at "], ["AAPL trades at"]]
)
def test_a_streamed_cut_ends_as_the_whole_cut(pieces: list[str]) -> None:
    """truncated_response: the SSE path (budget over deltas) and the JSON path (cut_words) agree."""
    budget = WordBudget(2)
    assert "".join(budget.take(p) for p in pieces) == cut_words("".join(pieces), 2)


@pytest.mark.parametrize("kind", ["truncate_json", "invalid_json"])
def test_corrupt_arguments_is_not_json(kind: str) -> None:
    with pytest.raises(ValueError):
        json.loads(corrupt_arguments(kind, '{"symbol": "AAPL", "n": 1}'))


def test_drifts() -> None:
    assert drift("tone_shift", "compress", 2)("I cannot do that") == "lol I can't do that"
    assert drift("json_field_rename", "compress", 2)('{"a": 1}') == '{"a_v2": 1}'
    assert drift("verbosity_shift", "compress", 2)("a b c d") == "a b"
    assert drift("verbosity_shift", "expand", 2)("a") == "a a"
    assert "rather not" in drift("refusal_rephrase", "compress", 2)("I cannot help")
    assert drift("format_change", "compress", 2)('{"a": 1}') == "a: 1"


def test_streamed_truncate_json_keeps_one_prefix_of_the_joined_arguments() -> None:
    from flakeproxy.wire.text import StreamedArgsCut

    whole = '{"symbol": "AAPL", "currency": "USD"}'
    pieces = [whole[:10], whole[10:20], whole[20:]]
    cut = StreamedArgsCut()
    out = [cut("get_quote", "")[1]] + [cut("", p)[1] for p in pieces]
    joined = "".join(out)
    assert joined and whole.startswith(joined) and len(joined) < len(whole)
    assert cut.whole(whole) == joined
    assert cut("other", "")[1] == "" and cut("", '{"a": 1}')[1] == '{"a"'  # a new call is cut afresh
