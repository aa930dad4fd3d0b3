"""An invariant's `turn:` on a conversation: last (the default), all, any, a number, conversation; each judged
turn sees that turn's answer, error, latency and journal entries; a one-turn prompt is judged as before."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.config.loader import parse_config
from flakeproxy.errors import ConfigError
from flakeproxy.judging.cells import Context, judge_episode
from flakeproxy.results import Episode, EpisodeVerdict, TurnRecord

TURNS = ["What is AAPL at?", "And in euros?", "Thanks"]


def _config(invariant: dict[str, Any]) -> FlakeproxyConfig:
    data = {
        "version": "2.0",
        "agent": {"type": "http", "endpoint": "http://127.0.0.1:9/chat", "reset_endpoint": "http://127.0.0.1:9/r"},
        "proxy": {"listeners": [{"name": "tools", "listen": "127.0.0.1:0", "upstream": "http://127.0.0.1:9"}]},
        "targets": {"quotes": {"listener": "tools", "path": "/q*"}},
        "golden_prompts": [TURNS],
        "contract": {"name": "c", "invariants": [{"id": "check", **invariant}]},
        "chaos_matrix": [{"name": "calm"}],
    }
    return parse_config(yaml.safe_dump(data))


def _episode(answers: list[str | None], journal: list[dict[str, Any]] | None = None) -> Episode:
    transcript = [
        TurnRecord(turn=n, prompt=p, answer=a, error=None if a is not None else "agent timed out", latency_ms=100.0 * n)
        for n, (p, a) in enumerate(zip(TURNS, answers, strict=True), 1)
    ]
    return Episode(
        id="e1",
        scenario="calm",
        prompt=" / ".join(TURNS),
        prompt_index=0,
        label="x",
        turns=TURNS,
        transcript=transcript,
        answer=answers[-1],
        error=transcript[-1].error,
        latency_ms=600.0,
        journal=journal or [],
    )


def _judge(invariant: dict[str, Any], episode: Episode) -> EpisodeVerdict:
    config = _config(invariant)
    assert config.contract is not None
    return judge_episode(config.contract.invariants[0], episode, Context(config))


EUROS = {"type": "regex", "pattern": "EUR"}
ANSWERS = ["AAPL is $189.50", "That is 174.34 EUR", "You are welcome"]


@pytest.mark.parametrize(
    ("turn", "outcome", "reason_starts"),
    [
        ("last", "fail", "turn 3: "),
        (2, "pass", "turn 2: "),
        (1, "fail", "turn 1: "),
        ("all", "fail", "turn 1: "),
        ("any", "pass", "turn 2: "),
        ("conversation", "pass", ""),
    ],
)
def test_each_turn_choice_judges_what_it_says(turn: Any, outcome: str, reason_starts: str) -> None:
    verdict = _judge({**EUROS, "turn": turn}, _episode(ANSWERS))
    assert (verdict.outcome, verdict.reason.startswith(reason_starts)) == (outcome, True), verdict
    assert verdict.prompt == " / ".join(TURNS)  # the cell still names the conversation


def test_last_is_the_default_and_all_passes_only_when_every_turn_does() -> None:
    assert _judge(EUROS, _episode(ANSWERS)).outcome == "fail"
    every = ["AAPL EUR", "EUR", "EUR too"]
    verdict = _judge({**EUROS, "turn": "all"}, _episode(every))
    assert verdict.outcome == "pass" and verdict.reason.startswith("turns 1, 2, 3: ")


def test_a_turn_without_an_answer_is_an_error_for_that_turn_only() -> None:
    answers = ["EUR", None, "EUR"]
    assert _judge({**EUROS, "turn": 1}, _episode(answers)).outcome == "pass"
    errored = _judge({**EUROS, "turn": 2}, _episode(answers))
    assert errored.outcome == "error" and errored.reason == "turn 2: agent error: agent timed out"
    assert _judge({**EUROS, "turn": "all"}, _episode(answers)).outcome == "error"
    assert _judge({**EUROS, "turn": "any"}, _episode(answers)).outcome == "pass"
    whole = _judge({**EUROS, "turn": "conversation"}, _episode(answers))
    assert whole.outcome == "error" and "turn 2: agent timed out" in whole.reason


def test_a_turn_no_prompt_has_is_a_config_error_and_a_shorter_prompt_is_n_a() -> None:
    with pytest.raises(ConfigError, match=r"contract.invariants\[0\].turn: turn 5, but the longest prompt it judges"):
        _judge({**EUROS, "turn": 5}, _episode(ANSWERS))
    config = _config({**EUROS, "turn": 3})
    assert config.contract is not None
    short = _episode(ANSWERS).model_copy(update={"transcript": _episode(ANSWERS).transcript[:2]})  # type: ignore[index]
    verdict = judge_episode(config.contract.invariants[0], short, Context(config))
    assert verdict.outcome == "not_applicable" and verdict.reason == "turn: 3, but this prompt has 2 turn(s)"
    one_turn = _episode(ANSWERS).model_copy(update={"transcript": None, "turns": None})
    verdict = judge_episode(config.contract.invariants[0], one_turn, Context(config))
    assert verdict.outcome == "not_applicable" and verdict.reason == "turn: 3, but this prompt has 1 turn(s)"


def test_latency_per_turn_and_for_the_whole_conversation() -> None:
    fast = {"type": "latency", "max_ms": 250}
    assert _judge({**fast, "turn": 2}, _episode(ANSWERS)).outcome == "pass"  # 200 ms
    assert _judge({**fast, "turn": "all"}, _episode(ANSWERS)).reason.startswith("turn 3: ")  # 300 ms
    assert _judge({**fast, "turn": "conversation"}, _episode(ANSWERS)).outcome == "fail"  # 600 ms in all


def test_journal_checks_see_the_requests_of_their_turn() -> None:
    def call(turn: int) -> dict[str, Any]:
        return {"turn": turn, "targets": ["quotes"], "url": "http://127.0.0.1:1/q", "method": "GET", "status": 200}

    journal = [call(1), call(2), call(2), call(2)]
    few = {"type": "call_count", "target": "quotes", "max": 2}
    assert _judge({**few, "turn": 1}, _episode(ANSWERS, journal)).outcome == "pass"
    assert _judge({**few, "turn": 2}, _episode(ANSWERS, journal)).outcome == "fail"
    assert _judge({**few, "turn": "conversation"}, _episode(ANSWERS, journal)).outcome == "fail"


def test_behavior_unchanged_auto_compares_turn_by_turn() -> None:
    same = {"type": "behavior_unchanged", "baseline": "auto", "similarity_threshold": 0.9}
    config = _config(same)
    assert config.contract is not None
    calm = _episode(ANSWERS).model_copy(update={"id": "e0"})
    changed = _episode([ANSWERS[0], "Which stock do you mean?", ANSWERS[2]])
    ctx = Context(config, {"e0": calm, "e1": changed}, {(changed.prompt, 0): "e0"})
    invariant = config.contract.invariants[0]
    by_turn = {
        turn: judge_episode(invariant.model_copy(update={"turn": turn}), changed, ctx).outcome for turn in (1, 2, 3)
    }
    assert by_turn == {1: "pass", 2: "fail", 3: "pass"}  # turn 2 against the calm turn 2, not the last answer


def test_behavior_unchanged_auto_on_the_whole_conversation_compares_the_whole() -> None:
    config = _config({"type": "behavior_unchanged", "baseline": "auto", "turn": "conversation"})
    assert config.contract is not None
    calm = _episode(ANSWERS).model_copy(update={"id": "e0"})
    same = _episode(ANSWERS)
    ctx = Context(config, {"e0": calm, "e1": same}, {(same.prompt, 0): "e0"})
    assert judge_episode(config.contract.invariants[0], same, ctx).outcome == "pass"


@pytest.mark.parametrize(
    ("invariant", "turn"),
    [
        ({"type": "max_llm_calls", "max": 5}, "last"),  # a journal check would pass the empty journal of turn 3
        ({"type": "max_llm_calls", "max": 5}, "conversation"),  # or the whole of a conversation that broke
        ({"type": "regex", "pattern": "EUR"}, 2),
    ],
)
def test_a_turn_not_sent_cannot_be_judged(invariant: dict[str, Any], turn: str | int) -> None:
    """A conversation broke at turn 1 (no reply): turns 2 and 3 were not sent. Whatever a check reads, it cannot
    judge them: ERROR with the reason, never a PASS of what was never asked."""
    why = "not sent: turn 1 got no reply (agent timed out after 400 ms), so the conversation stopped there"
    episode = _episode([None, None, None])
    assert episode.transcript is not None
    episode.transcript[0].error = "agent timed out after 400 ms"
    for record in episode.transcript[1:]:
        record.error, record.sent = why, False
    verdict = _judge({**invariant, "turn": turn}, episode)
    assert verdict.outcome == "error" and verdict.reason.endswith(why), verdict.reason
