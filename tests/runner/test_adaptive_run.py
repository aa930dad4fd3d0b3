"""Adaptive replicas on a real run (real proxy, real upstream, the naive HTTP agent): the calm cell settles at its
first possible look and gets no more episodes; the cell whose tool fails half the time stays open and gets
more, round by round, up to its verdict or max."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from flakeproxy.judging.stats_sequential import adaptive_design, adaptive_step
from tests.runner.world import cli, run, world

# the naive agent answers from the quote tool through the LLM ("... the exchange feed ..."); when the tool
# fails it makes a figure up without it
INVARIANT = {"id": "uses-feed", "type": "regex", "pattern": "exchange feed", "severity": "high"}
MATRIX = [
    {"name": "calm"},
    {
        "name": "tool-flaky",
        "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503, "probability": 0.5}],
    },
]
REPLICAS = {"min": 2, "max": 10}
SCORING = {"replica_aggregation": "rate", "min_pass_rate": 0.3}


def test_open_cells_get_more_episodes_and_settled_cells_do_not(tmp_path: Path) -> None:
    with world(tmp_path, "naive", invariants=[INVARIANT], matrix=MATRIX, run={"replicas": REPLICAS}) as w:
        w.data["scoring"] = SCORING
        w.config.write_text(yaml.safe_dump(w.data))
        result = run(w.config)
    calm, flaky = result.cell("uses-feed", "calm"), result.cell("uses-feed", "tool-flaky")
    design = adaptive_design(2, 10, 0.3)
    # 4/4 is the first PASS the design allows (3/3 is not enough at 0.3 with 2.5% spent over 9 looks)
    assert design.pass_at[:3] == (3, 4, 4)
    assert (calm.outcome, calm.replicas, calm.settled_at) == ("pass", ["pass"] * 4, 4)
    assert calm.reason.startswith("4/4 passed by replica 4: PASS needs 4 there (adaptive 2-10, min_pass_rate 0.3")
    assert len(calm.episodes) == 4  # settled: no episode ran for it after its look
    assert len(flaky.episodes) > 4 and "fail" in flaky.replicas
    # the flaky cell's verdict is the sequential rule's on its replicas, and it ran only until that verdict
    state = adaptive_step([o == "pass" for o in flaky.replicas], design)
    assert state.settled and flaky.settled_at == state.replicas == len(flaky.replicas)
    assert flaky.outcome == state.outcome and flaky.reason.startswith(state.reason)
    # with run.seed 7 the tool failed in 4 of its first 8 episodes: 4/8 can no longer (or hardly) reach
    # PASS (7 of 10) or FAIL, so it settled INCONCLUSIVE at look 8 and replicas 9 and 10 never ran
    assert (flaky.outcome, flaky.settled_at, flaky.replicas.count("pass")) == ("inconclusive", 8, 4)
    assert result.agent_invocations == len(result.episodes) == 4 + len(flaky.episodes)
    assert sorted(e.replica for e in result.episodes if e.scenario == "tool-flaky") == list(range(len(flaky.episodes)))


def test_a_shard_of_an_adaptive_run_is_refused_in_one_line(tmp_path: Path) -> None:
    with world(tmp_path, "naive", invariants=[INVARIANT], matrix=MATRIX, run={"replicas": REPLICAS}) as w:
        w.data["scoring"] = SCORING
        w.config.write_text(yaml.safe_dump(w.data))
        done = cli(w.config, "--shard", "1/2")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--shard needs a fixed run.replicas" in done.stderr


def test_the_bench_runs_both_ways_through_the_engine() -> None:
    """bench/adaptive.py, two seeded repetitions: its figures are the engine's (the full run is the acceptance)."""
    bench = Path(__file__).parents[2] / "bench" / "adaptive.py"
    done = subprocess.run([sys.executable, str(bench), "--reps", "2"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "episodes paid per run: fixed 480.0, adaptive " in done.stdout
    assert "target (>= 40% fewer episodes at the same or lower false-verdict rate): MET" in done.stdout
