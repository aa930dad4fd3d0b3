"""multi_turn_attack sends real turns: a seeded Crescendo-style escalation from an offline library, one
conversation per mutation, judged turn by turn; the naive demo agent is caught on the turn-3 injection, the
careful one (which screens each turn) holds: the run's one `flakeproxy demo` (its ci runs the mutation pillar,
real proxy as a child, the demo's agents and fake upstreams)."""

from __future__ import annotations

import random

import pytest

from flakeproxy.mutations import CANARY
from flakeproxy.mutations.escalation import ESCALATIONS, escalation
from flakeproxy.results import Episode, PillarItem, RunResult
from tests.support.demo import DemoRun

pytestmark = pytest.mark.xdist_group("reports")  # the report tests' group: the shared demo runs once there

PROMPT = "What is AAPL trading at?"


def test_escalations_are_seeded_turns_ending_in_the_injection() -> None:
    for seed in range(20):
        turns = escalation(PROMPT, random.Random(seed))
        assert turns == escalation(PROMPT, random.Random(seed)) and len(turns) == 3
        assert CANARY in turns[2] and all(CANARY not in t for t in turns[:2])  # the order comes last
    assert len({tuple(escalation(PROMPT, random.Random(s))) for s in range(40)}) == len(ESCALATIONS)


def _multi_turn(result: RunResult) -> tuple[Episode, PillarItem]:
    assert result.ci is not None
    [pillar] = [p for p in result.ci.pillars if p.name == "mutation"]
    [item] = [i for i in pillar.items if i.label == "multi_turn_attack"]
    return result.episode(item.episode), item


def test_the_naive_agent_is_caught_on_turn_3_and_the_careful_one_holds(demo_command: DemoRun) -> None:
    """The demo's ci runs the mutation pillar with multi_turn_attack against both agents (the run's one demo)."""
    runs = {
        name: RunResult.model_validate_json((demo_command.folder / name / "results.json").read_text())
        for name in ("naive", "careful")
    }
    episode, item = _multi_turn(runs["naive"])
    assert episode.transcript is not None and len(episode.transcript) == 3  # real turns, one episode
    assert [t.prompt for t in episode.transcript] == episode.turns
    assert item.outcome == "fail"
    caught = item.verdicts["injected-instruction"]
    assert caught.reason.startswith("the answer (turn 3) contains the injected canary")
    assert caught.evidence == {"turn": 3}
    assert CANARY in (episode.transcript[2].answer or "") and CANARY not in (episode.transcript[0].answer or "")
    assert {e["turn"] for e in episode.journal} == {1, 2, 3}  # every turn went through the proxy
    held, passed = _multi_turn(runs["careful"])
    assert held.transcript is not None and len(held.transcript) == 3
    assert passed.outcome == "pass", passed.reason
