"""runner/adaptive.next_round on a planned config (pure: no agent runs): which episodes a round adds for the
open cells, and only for them."""

from __future__ import annotations

from flakeproxy import parse_config
from flakeproxy.judging.adaptive import design_of
from flakeproxy.planning.plan import plan_episodes
from flakeproxy.results import CellResult, Episode, Outcome
from flakeproxy.runner.adaptive import next_round
from tests.config.base_config import BASE, edit

ADAPTIVE = "run: {replicas: {min: 2, max: 30}}\n"
RATE = ("scoring:\n", "scoring:\n  replica_aggregation: rate\n  min_pass_rate: 0.8\n")
SIMILAR = "    - id: fast\n      type: behavior_unchanged\n"


def cell(invariant: str, scenario: str, replicas: list[Outcome]) -> CellResult:
    return CellResult(
        invariant=invariant,
        type="regex",
        scenario=scenario,
        severity="high",
        when="always",
        outcome="pass",
        reason="r",
        replicas=replicas,
    )


def test_a_round_runs_the_next_replica_of_open_cells_and_their_calm_baselines() -> None:
    text = edit("    - id: fast\n      type: latency\n      max_ms: 60000\n", SIMILAR).replace(*RATE) + ADAPTIVE
    config = parse_config(text, "f.yaml")
    plan = plan_episodes(config, has_reset=True)
    design = design_of(config)
    assert design is not None and len(plan.episodes) == 3 * 30  # planned for max: only some of them run
    done = {e.id: e for e in plan.episodes if e.replica < 2}
    cells = [  # every cell with judged replicas is open at 2 (PASS needs 18 straight passes)
        cell("cite", "tool-down", ["pass", "fail"]),
        cell("fast", "tool-down", ["pass", "pass"]),  # behavior_unchanged: compares with no-chaos's answer
        cell("fast", "llm-degraded", []),  # no judged replica (say, ERROR): no round for it
        cell("cite", "llm-degraded", ["fail", "fail"]),
    ]
    wanted = next_round(config, plan, cells, done, design)
    assert sorted((e.scenario, e.replica) for e in wanted) == [
        ("llm-degraded", 2),
        ("no-chaos", 2),
        ("tool-down", 2),
    ]
    # no cell of no-chaos is open: its replica 2 runs as the calm answer the behavior_unchanged cell compares with
    assert plan.baselines[(wanted[0].prompt, 2)] in {e.id for e in wanted}
    without = next_round(config, plan, [c for c in cells if c.invariant == "cite"], done, design)
    assert sorted((e.scenario, e.replica) for e in without) == [("llm-degraded", 2), ("tool-down", 2)]
    settled = [cell("cite", s, ["pass"] * 30) for s in ("no-chaos", "tool-down", "llm-degraded")]
    assert next_round(config, plan, settled, done, design) == []


def test_a_round_needs_the_replicas_up_to_the_next_look() -> None:
    text = BASE.replace(*RATE) + "run: {replicas: {min: 2, max: 30, every: 4}}\n"
    config = parse_config(text, "f.yaml")
    plan = plan_episodes(config, has_reset=True)
    design = design_of(config)
    assert design is not None and design.looks[:3] == (2, 6, 10)
    done: dict[str, Episode] = {e.id: e for e in plan.episodes if e.replica < 2}
    wanted = next_round(config, plan, [cell("cite", "tool-down", ["pass", "fail"])], done, design)
    assert [(e.scenario, e.replica) for e in wanted] == [("tool-down", r) for r in (2, 3, 4, 5)]
