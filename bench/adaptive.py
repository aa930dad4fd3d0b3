"""Adaptive replicas vs fixed-N through the real engine, on a seeded flaky agent (issue 26 acceptance).

Run: .venv/bin/python bench/adaptive.py [--reps 100] [--seed 26] [--min 2] [--max 40] [--threshold 0.8] [--worst]

Each repetition runs the same contract twice with `flakeproxy.run_contract_async` (plan, episodes, judging,
scoring; a python agent in-process, bench/_flaky_agent.py, so no proxy is needed): once with
`run.replicas: MAX` (fixed) and once with `run.replicas: {min: MIN, max: MAX}` (adaptive), both under
`replica_aggregation: rate` at `min_pass_rate`. The agent's mix is bench/adaptive_sim.py's: 12 scenarios x 4
rules, each cell passing with its own true probability. Paid episodes are the runs' agent_invocations; a false
verdict is PASS for a cell whose true rate is below the threshold, or FAIL for one at or above it.

Why max 40 by default: at max 30 this mix cannot save 40% under the stated error rate (a cell that always
passes needs 18 replicas before its first PASS look, so a scenario with one pays at least 18 of 30;
bench/adaptive_sim.py computes 33.7% exactly); at max 40 it saves 42.9% in expectation. The exact expected
false-verdict rates of both rules on this mix (dynamic programming, bench/adaptive_sim.py) are printed beside
the observed ones: both are far below the stated per-cell level, and the adaptive rule's is a little higher
than fixed-N's in expectation (it spends its error over many looks), so in some seeds the observed rates can
differ by a false verdict either way.

--worst replaces the mix with its worst case for the error statement: every cell's true rate exactly at the
threshold, where any FAIL is false. Both rules must stay within the stated level (1 - confidence) / 2 per cell.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import _flaky_agent
from adaptive_sim import MIX, Mix, exact

from flakeproxy.config import parse_config
from flakeproxy.judging.stats import wilson
from flakeproxy.judging.stats_sequential import adaptive_design
from flakeproxy.results import RunResult
from flakeproxy.runner.engine import run_contract_async


def config_text(mix: Mix, replicas: Any, threshold: float, confidence: float) -> str:
    import json

    rules = len(mix[0][1])
    data = {
        "version": "2.0",
        "agent": {"type": "python", "callable": "_flaky_agent:run", "reset_function": "_flaky_agent:reset"},
        "golden_prompts": ["Is the agent keeping its rules?"],
        "contract": {
            "name": "seeded flaky agent",
            "invariants": [
                {"id": f"keeps-rule-{j}", "type": "regex", "pattern": f"keeps-rule-{j}", "severity": "high"}
                for j in range(rules)
            ],
        },
        "chaos_matrix": [{"name": name} for name, _ in mix],
        "run": {"replicas": replicas, "seed": 0},
        "scoring": {"replica_aggregation": "rate", "min_pass_rate": threshold, "confidence": confidence},
    }
    return json.dumps(data)  # JSON is YAML


async def one_run(folder: Path, mix: Mix, replicas: Any, args: argparse.Namespace) -> RunResult:
    path = folder / "flakeproxy.yaml"
    path.write_text(config_text(mix, replicas, args.threshold, args.confidence))
    config = parse_config(path.read_text(), str(path))
    return await run_contract_async(config, str(path), None)


def tally(result: RunResult, mix: Mix, threshold: float, into: Counter[str]) -> None:
    truth = dict(mix)
    into["paid"] += result.agent_invocations
    for cell in result.cells:
        p = truth[cell.scenario][int(cell.invariant.rsplit("-", 1)[1])]
        into["cells"] += 1
        into["false"] += (cell.outcome == "pass" and p < threshold) or (cell.outcome == "fail" and p >= threshold)
        into["inconclusive"] += cell.outcome == "inconclusive"
        into["other"] += cell.outcome not in ("pass", "fail", "inconclusive")


def rate(count: int, cells: int) -> str:
    ci = wilson(count, cells)
    return f"{count / cells:.5f} ({count}/{cells}, 95% {ci.low:.5f}-{ci.high:.5f})"


async def bench(mix: Mix, args: argparse.Namespace) -> tuple[Counter[str], Counter[str]]:
    _flaky_agent.MIX = dict(mix)
    fixed, adaptive = Counter[str](), Counter[str]()
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            _flaky_agent.SEED = args.seed * 100_003 + rep
            tally(await one_run(Path(tmp), mix, args.max, args), mix, args.threshold, fixed)
            adaptive_run = await one_run(Path(tmp), mix, {"min": args.min, "max": args.max}, args)
            tally(adaptive_run, mix, args.threshold, adaptive)
            print(f"  repetition {rep + 1}/{args.reps}: fixed {fixed['paid']}, adaptive {adaptive['paid']} episodes")
    return fixed, adaptive


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--min", type=int, default=2)
    parser.add_argument("--max", type=int, default=40)
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--worst", action="store_true", help="Every cell at the threshold (the worst case).")
    args = parser.parse_args()
    mix: Mix = [(name, [args.threshold] * len(ps)) for name, ps in MIX] if args.worst else MIX
    logging.disable(logging.WARNING)
    design = adaptive_design(args.min, args.max, args.threshold, args.confidence)
    print(
        f"seed {args.seed}, {args.reps} repetitions through the engine; {len(mix)} scenarios x {len(mix[0][1])} "
        f"rules{' all at the threshold (--worst)' if args.worst else ''}; fixed {args.max} replicas vs adaptive "
        f"{args.min}-{args.max}; rate rule at min_pass_rate "
        f"{args.threshold}, confidence {args.confidence} (stated false-verdict level per cell {design.alpha:g})"
    )
    started = time.monotonic()
    fixed, adaptive = asyncio.run(bench(mix, args))
    expected = exact(mix, design)
    saved = 1 - adaptive["paid"] / fixed["paid"]
    print(
        f"\nepisodes paid per run: fixed {fixed['paid'] / args.reps:.1f}, adaptive {adaptive['paid'] / args.reps:.1f}"
    )
    print(f"  saved {saved:.1%} (exact expectation {expected.saved:.1%})")
    print(f"false-verdict rate per cell: fixed {rate(fixed['false'], fixed['cells'])}")
    print(f"                          adaptive {rate(adaptive['false'], adaptive['cells'])}")
    print(f"  exact expectation: fixed {expected.fixed_false:.5f}, adaptive {expected.adaptive_false:.5f}")
    print(
        f"inconclusive per cell: fixed {fixed['inconclusive'] / fixed['cells']:.3f}, adaptive "
        f"{adaptive['inconclusive'] / adaptive['cells']:.3f} (exact {expected.fixed_inconclusive:.3f}, "
        f"{expected.adaptive_inconclusive:.3f}); other outcomes {fixed['other'] + adaptive['other']}"
    )
    if args.worst:
        within = all(wilson(c["false"], c["cells"]).low <= design.alpha for c in (fixed, adaptive))
        print(f"worst case: both within the stated level {design.alpha:g} per cell: {'YES' if within else 'NO'}")
        sys.exit(0 if within else 1)
    met = saved >= 0.40 and adaptive["false"] <= fixed["false"]
    print(
        f"target (>= 40% fewer episodes at the same or lower false-verdict rate): {'MET' if met else 'NOT MET'} "
        f"(saved {saved:.1%}; false {adaptive['false']} vs {fixed['false']} of {fixed['cells']} cells); "
        f"{time.monotonic() - started:.0f} s"
    )
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
