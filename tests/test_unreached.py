"""flakeproxy.judging.unreached: a fault that matched its target's calls, but fewer times an episode than its
after_calls lets through, is named with the count the journals show, and so is one that matched often enough but
whose probability or turns held it; anything else is left to the other hints."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from flakeproxy import parse_config
from flakeproxy.judging.unreached import unreached
from flakeproxy.results import Episode
from tests.config.base_config import BASE

QUOTE = {"listener": "tools", "targets": ["market_data_api"], "method": "GET", "url": "http://127.0.0.1:9102/v1/quotes"}
CHAT = {"listener": "llm", "targets": ["llm"], "method": "POST", "url": "http://127.0.0.1:9101/v1/chat/completions"}
ERROR = {"tool": "market_data_api", "mode": "error", "error_code": 503}


def episode(n: int, journal: list[dict[str, Any]]) -> Episode:
    return Episode(
        id=f"e{n}", scenario="late", prompt="What is AAPL trading at?", prompt_index=0, replica=n, label=f"l{n}",
        answer="ok", journal=[{"seq": i, **e} for i, e in enumerate(journal)],
    )  # fmt: skip


def why(faults: dict[str, Any], *journals: list[dict[str, Any]]) -> str | None:
    data = yaml.safe_load(BASE)
    data["targets"]["news_api"] = {"listener": "tools", "path": "/v1/news*"}  # never called here
    data["chaos_matrix"] = [{"name": "no-chaos"}, {"name": "late", **faults}]
    config = parse_config(yaml.safe_dump(data), "test.yaml")
    found = unreached(config, config.scenario("late"), [episode(i, j) for i, j in enumerate(journals)])
    return found.detail() if found else None


@pytest.mark.parametrize(
    ("faults", "journals", "detail"),
    [
        (
            {"tool_faults": [{**ERROR, "after_calls": 5}]},
            [[CHAT, QUOTE, CHAT], [QUOTE, QUOTE]],  # the most in one episode: 2
            "the agent made at most 2 matching call(s) to market_data_api per episode, but tool_faults[0] error has "
            "after_calls: 5, which lets the first 4 of an episode through: lower after_calls to 2 or less",
        ),
        (
            {"llm_faults": [{"mode": "overloaded", "after_calls": 3}], "tool_faults": [{**ERROR, "tool": "news*"}]},
            [[CHAT, QUOTE]],
            "the agent made at most 1 matching call(s) to llm per episode, but llm_faults[0] overloaded has "
            "after_calls: 3, which lets the first 2 of an episode through: lower after_calls to 1; "
            "tool_faults[0] error matched no request: check targets",
        ),
        ({"tool_faults": [{**ERROR, "after_calls": 2}]}, [[QUOTE, QUOTE]], None),  # reached: not the count
        ({"tool_faults": [{**ERROR, "after_calls": 2, "tool": "news*"}]}, [[QUOTE]], None),  # matched nothing
        ({"tool_faults": [{**ERROR, "match_url": "*/v1/quotes", "tool": None, "after_calls": 4}]}, [[QUOTE]] * 2,
         "the agent made at most 1 matching call(s) to market_data_api per episode, but tool_faults[0] error has "
         "after_calls: 4, which lets the first 3 of an episode through: lower after_calls to 1"),
        (  # a trial's warning said "no request matched its faults; check targets" for these
            {"tool_faults": [{**ERROR, "probability": 0.2}]},
            [[CHAT, QUOTE], [QUOTE, QUOTE]],
            "tool_faults[0] error matched 3 request(s), but its probability (0.2) fired on none: by chance, as "
            "probability < 1 allows (more replicas, or a higher probability, make it fire)",
        ),
        ({"tool_faults": [{**ERROR, "probability": 0}]}, [[QUOTE]],  # a trial's was told more replicas would help
         "tool_faults[0] error matched 1 request(s), but its probability is 0: it never fires (give it a probability "
         "above 0, or remove it)"),
        ({"tool_faults": [{**ERROR, "turns": [2, 3]}]}, [[QUOTE]],
         "tool_faults[0] error matched 1 request(s), none of them on its turns (2, 3)"),
    ],
)  # fmt: skip
def test_a_fault_short_of_its_after_calls_is_named_with_the_journals_count(
    faults: dict[str, Any], journals: list[list[dict[str, Any]]], detail: str | None
) -> None:
    assert why(faults, *journals) == detail


def test_a_fault_that_was_decided_leaves_the_hint_to_its_record() -> None:
    record = {"scenario": "late", "section": "tool_faults", "index": 0, "kind": "error", "applied": False}
    decided = {**QUOTE, "fault": {**record, "effect": None, "not_applied_reason": "x", "settled": True}}
    assert why({"tool_faults": [{**ERROR, "after_calls": 5}]}, [QUOTE], [decided]) is None
