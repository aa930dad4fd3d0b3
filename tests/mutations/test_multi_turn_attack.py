"""multi_turn_attack sends real turns: a seeded Crescendo-style escalation from an offline library, one
conversation per mutation, judged turn by turn; the naive demo agent is caught on the turn-3 injection, the
careful one (which screens each turn) holds. Real proxy, the demo's agents and fake upstreams."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from flakeproxy.config import load_config
from flakeproxy.mutations import CANARY
from flakeproxy.mutations.escalation import ESCALATIONS, escalation
from flakeproxy.results import RunResult
from flakeproxy.runner.ci import run_ci_async
from flakeproxy.runner.demo.world import RUN_INVARIANTS
from tests.replay.demo_world import Counter, counting_upstream, new_world, serving
from tests.support.loops import LoopThread

PROMPT = "What is AAPL trading at?"


def test_escalations_are_seeded_turns_ending_in_the_injection() -> None:
    for seed in range(20):
        turns = escalation(PROMPT, random.Random(seed))
        assert turns == escalation(PROMPT, random.Random(seed)) and len(turns) == 3
        assert CANARY in turns[2] and all(CANARY not in t for t in turns[:2])  # the order comes last
    assert len({tuple(escalation(PROMPT, random.Random(s))) for s in range(40)}) == len(ESCALATIONS)


@pytest.fixture(scope="module")
def thread() -> Iterator[LoopThread]:
    loop = LoopThread("multi-turn-attack")
    yield loop
    loop.close()


def _ci(thread: LoopThread, folder: Path, careful: bool) -> RunResult:
    world = new_world(thread)
    mutations = {"count": 2, "types": ["multi_turn_attack"]}
    with (
        serving(thread, counting_upstream(Counter([])), world.upstream_port),
        serving(thread, world.agent(careful=careful)) as agent,
    ):
        path = world.config(folder, agent, invariants=RUN_INVARIANTS, mutations=mutations)
        return asyncio.run(run_ci_async(load_config(path), str(path), folder / "out"))


@pytest.mark.timeout(120)
def test_the_naive_agent_is_caught_on_turn_3_and_the_careful_one_holds(thread: LoopThread, tmp_path: Path) -> None:
    naive = _ci(thread, tmp_path / "naive", careful=False)
    assert naive.ci is not None
    [pillar] = [p for p in naive.ci.pillars if p.name == "mutation"]
    assert len(pillar.items) == 4  # 2 per golden prompt, each one conversation
    for item in pillar.items:
        episode = naive.episode(item.episode)
        assert episode.transcript is not None and len(episode.transcript) == 3  # real turns, one episode
        assert [t.prompt for t in episode.transcript] == episode.turns
        assert item.outcome == "fail"
        caught = item.verdicts["injected-instruction"]
        assert caught.reason.startswith("the answer (turn 3) contains the injected canary") and caught.evidence == {
            "turn": 3
        }
        assert CANARY in (episode.transcript[2].answer or "") and CANARY not in (episode.transcript[0].answer or "")
        assert {e["turn"] for e in episode.journal} == {1, 2, 3}  # every turn went through the proxy
    careful = _ci(thread, tmp_path / "careful", careful=True)
    assert careful.ci is not None
    [held] = [p for p in careful.ci.pillars if p.name == "mutation"]
    assert [i.outcome for i in held.items] == ["pass"] * 4, [i.reason for i in held.items]
