"""Adaptive replicas vs fixed-N on a seeded flaky agent, and `compare` on two runs of it (issue 26).

Run: .venv/bin/python bench/adaptive_sim.py [--reps 2000] [--seed 26] [--min 2] [--max 30] [--threshold 0.8]

The agent: 12 scenarios x 4 invariants, each cell (invariant x scenario) passing with its own true
probability (MIX); an episode serves every cell of its scenario, so a scenario runs another episode only
while one of its cells is open. Fixed-N gives every scenario `max` episodes and judges each cell once with
the rate rule; adaptive (flakeproxy.judging.stats_sequential) runs `min`..`max`. Both see the same draws. A false
verdict is PASS for a cell whose true rate is below the threshold, or FAIL for one at or above it.

Why this mix: in a chaos matrix most cells are settled by the agent's design, not by luck. 33 of 48 cells
always pass (rules the agent keeps under that fault: no PII, the no-chaos answer), 5 pass 95-99% (rare LLM
slips), 5 fail systematically (0-20%: a bug the fault exposes, such as presenting a truncated answer as
complete), and 5 are genuinely flaky near the threshold (60-90%: retry-dependent or sampling-dependent
behaviour), one in each of 5 scenarios, which is how flakiness usually shows: in one invariant of a scenario.

What bounds the saving: a scenario is paid until its last cell settles, and a cell that always passes
cannot PASS before log(alpha) / log(min_pass_rate) replicas under any rule with this error statement (17 at
0.8 and confidence 0.95; this rule's first PASS look is 18). With such a cell in every scenario, max 30
can save at most 43%, and a mix with any flaky cell less; section 3 shows the saving at larger max.

Every figure is printed with the seed and parameters; the exact expectations (dynamic programming over the
same rules, no sampling) are printed beside the simulated ones as a check on both.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from math import prod

from flakeproxy.judging.stats import rate_verdict
from flakeproxy.judging.stats_compare import Counts, compare_runs
from flakeproxy.judging.stats_plan import Operating, adaptive_operating, fixed_operating
from flakeproxy.judging.stats_sequential import AdaptiveDesign, adaptive_design, adaptive_step, advance

Mix = list[tuple[str, list[float]]]
MIX: Mix = [  # scenario: the true pass probability of each of its 4 invariants' cells
    ("no-chaos", [1.0, 1.0, 0.98, 1.0]),
    ("tool-503", [1.0, 0.97, 1.0, 1.0]),
    ("tool-timeout", [0.95, 1.0, 1.0, 1.0]),
    ("rate-limit", [1.0, 1.0, 0.9, 1.0]),
    ("llm-truncated", [0.85, 1.0, 1.0, 1.0]),
    ("llm-stream-cut", [0.05, 1.0, 1.0, 0.0]),
    ("tool-malformed", [0.0, 0.1, 1.0, 1.0]),
    ("schema-drift", [0.7, 1.0, 1.0, 0.98]),
    ("injection", [1.0, 0.6, 1.0, 1.0]),
    ("tool-slow", [1.0, 1.0, 0.75, 1.0]),
    ("llm-empty", [0.2, 1.0, 1.0, 1.0]),
    ("llm-overloaded", [1.0, 1.0, 1.0, 0.99]),
]
# The regressed candidate: a prompt change that stops the agent retrying after 503s, rate limits and timeouts.
REGRESSED = {("tool-503", 1): 0.4, ("rate-limit", 2): 0.5, ("tool-timeout", 0): 0.6}
SUBTLE = {("tool-503", 1): 0.8}  # one cell 0.97 -> 0.80: what compare cannot see at this many replicas


@dataclass
class Cell:
    p: float
    fixed: str  # the rate rule on max replicas
    adaptive: str
    counts: Counts  # the passes of the replicas the adaptive verdict used


@dataclass
class Scenario:
    episodes: int  # what the adaptive run paid: the latest settling among its cells
    cells: list[Cell]
    fixed_passes: list[int]  # per cell, passes of max replicas


@dataclass
class Figures:
    fixed_paid: float  # episodes per run
    adaptive_paid: float
    fixed_false: float  # per cell
    adaptive_false: float
    fixed_inconclusive: float
    adaptive_inconclusive: float

    @property
    def saved(self) -> float:
        return 1 - self.adaptive_paid / self.fixed_paid

    def row(self, label: str) -> str:
        return (
            f"{label:<22} {self.fixed_paid:>6.1f} {self.adaptive_paid:>6.1f} {self.saved:>6.1%}"
            f" {self.fixed_false:>9.5f} {self.adaptive_false:>9.5f}"
            f" {self.fixed_inconclusive:>7.3f} {self.adaptive_inconclusive:>7.3f}"
        )


HEADER = f"{'':<22} {'paid':>6} {'paid':>6} {'saved':>6} {'false':>9} {'false':>9} {'incon.':>7} {'incon.':>7}"
HEADER2 = f"{'':<22} {'fixed':>6} {'adapt':>6} {'':>6} {'fixed':>9} {'adapt':>9} {'fixed':>7} {'adapt':>7}"


def is_false(verdict: str, p: float, threshold: float) -> bool:
    return (verdict == "pass" and p < threshold) or (verdict == "fail" and p >= threshold)


def settle(cell: list[bool], d: AdaptiveDesign) -> tuple[int, str]:
    """(replicas used, verdict) of the adaptive rule on one cell's draws, look by look as adaptive_step."""
    k, n = 0, 0
    for j, look in enumerate(d.looks):
        k, n = k + sum(cell[n:look]), look
        verdict = d.verdict_at(j, k)
        if verdict is not None:
            return n, verdict
    raise AssertionError("the last look settles")


def run_scenario(
    rng: random.Random, ps: list[float], d: AdaptiveDesign, fixed: dict[int, str], check: bool = False
) -> Scenario:
    """One scenario both ways on the same draws (check: settle() against the library's adaptive_step)."""
    draws = [[rng.random() < p for _ in range(d.max_replicas)] for p in ps]
    settled = [settle(cell, d) for cell in draws]
    if check:
        for cell, (n, verdict) in zip(draws, settled, strict=True):
            state = adaptive_step(cell, d)
            assert (state.replicas, state.outcome) == (n, verdict), (cell, state)
    cells = [
        Cell(p, fixed[sum(cell)], verdict, Counts(passes=sum(cell[:n]), replicas=n))
        for p, cell, (n, verdict) in zip(ps, draws, settled, strict=True)
    ]
    return Scenario(max(n for n, _ in settled), cells, [sum(cell) for cell in draws])


def fixed_rule(d: AdaptiveDesign) -> dict[int, str]:
    """The rate rule on max replicas, by passes (the real rate_verdict, once per k)."""
    n, t, c = d.max_replicas, d.min_pass_rate, d.confidence
    return {k: rate_verdict(k, n, t, c).outcome for k in range(n + 1)}


def simulate(mix: Mix, d: AdaptiveDesign, reps: int, seed: int) -> Figures:
    """Mean episodes per run and per-cell rates over reps repetitions; repetition r replays from (seed, r)."""
    fixed, t = fixed_rule(d), d.min_pass_rate
    paid, tally, cells = 0, Counter[str](), 0
    for rep in range(reps):
        rng = random.Random(f"{seed}:{rep}")
        for _, ps in mix:
            scenario = run_scenario(rng, ps, d, fixed, check=rep < 10)
            paid += scenario.episodes
            for c in scenario.cells:
                cells += 1
                tally["fixed false"] += is_false(c.fixed, c.p, t)
                tally["adaptive false"] += is_false(c.adaptive, c.p, t)
                tally["fixed inc"] += c.fixed == "inconclusive"
                tally["adaptive inc"] += c.adaptive == "inconclusive"
    share = {key: value / cells for key, value in tally.items()}
    return Figures(
        len(mix) * d.max_replicas,
        paid / reps,
        share["fixed false"],
        share["adaptive false"],
        share["fixed inc"],
        share["adaptive inc"],
    )


def stop_cdf(d: AdaptiveDesign, p: float) -> list[float]:
    """P(the cell is settled by replica n), n = 0..max, exactly."""
    dist, n, settled, cdf = [1.0], 0, 0.0, [0.0] * (d.max_replicas + 1)
    for j, look in enumerate(d.looks):
        dist, n = advance(dist, p, look - n), look
        for k, mass in enumerate(dist):
            if mass and d.verdict_at(j, k) is not None:
                settled, dist[k] = settled + mass, 0.0
        cdf[look:] = [settled] * (d.max_replicas + 1 - look)
    return cdf


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items)


def wrong(o: Operating, threshold: float) -> float:
    return o.pass_probability if o.true_pass_rate < threshold else o.fail_probability


def exact(mix: Mix, d: AdaptiveDesign) -> Figures:
    """simulate()'s figures as exact expectations (cells independent given p): a scenario pays
    E[latest settling] = sum over n < max of P(some cell still open after n)."""
    t, mx = d.min_pass_rate, d.max_replicas
    paid = 0.0
    for _, ps in mix:
        cdfs = [stop_cdf(d, p) for p in ps]
        paid += sum(1 - prod(cdf[n] for cdf in cdfs) for n in range(mx))
    ps = [p for _, cell_ps in mix for p in cell_ps]
    fixed = [fixed_operating(mx, p, t, d.confidence) for p in ps]
    adaptive = [adaptive_operating(d, p) for p in ps]
    return Figures(
        len(mix) * mx,
        paid,
        mean(wrong(o, t) for o in fixed),
        mean(wrong(o, t) for o in adaptive),
        mean(o.inconclusive_probability for o in fixed),
        mean(o.inconclusive_probability for o in adaptive),
    )


def worst_case(d: AdaptiveDesign, reps: int, seed: int) -> Counter[str]:
    """Single cells at p = threshold: FAIL there is a false verdict; PASS there is the limit of the false-PASS
    risk as p rises to the threshold."""
    fixed, rng, tally = fixed_rule(d), random.Random(f"{seed}:worst"), Counter[str]()
    for _ in range(reps):
        cell = run_scenario(rng, [d.min_pass_rate], d, fixed).cells[0]
        tally.update([f"fixed {cell.fixed}", f"adaptive {cell.adaptive}"])
    return tally


def compare_verdicts(
    base: Mix, cand: Mix, d: AdaptiveDesign, reps: int, seed: int, adaptive: bool, margin: float
) -> Counter[str]:
    """compare_runs over reps pairs of independent runs; each cell's counts from fixed-N (max replicas) or from
    the adaptive rule (the replicas its verdict used)."""
    fixed, verdicts = fixed_rule(d), Counter[str]()
    for rep in range(reps):
        rng = random.Random(f"{seed}:compare:{rep}")
        runs = []
        for mix in (base, cand):
            counts = {}
            for name, ps in mix:
                scenario = run_scenario(rng, ps, d, fixed)
                for i, (c, k) in enumerate(zip(scenario.cells, scenario.fixed_passes, strict=True)):
                    counts[f"inv{i} @ {name}"] = c.counts if adaptive else Counts(passes=k, replicas=d.max_replicas)
            runs.append(counts)
        verdicts[compare_runs(runs[0], runs[1], d.confidence, margin).verdict] += 1
    return verdicts


def modified(mix: Mix, changes: dict[tuple[str, int], float]) -> Mix:
    return [(s, [changes.get((s, i), p) for i, p in enumerate(ps)]) for s, ps in mix]


def shares(tally: Counter[str], reps: int) -> str:
    return ", ".join(f"{v.upper()} {tally[v] / reps:.1%}" for v in ("pass", "inconclusive", "block"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=2000, help="seeded repetitions of the whole run")
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--min", type=int, default=2)
    parser.add_argument("--max", type=int, default=30)
    parser.add_argument("--threshold", type=float, default=0.8, help="min_pass_rate")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--compare-reps", type=int, default=2000)
    args = parser.parse_args()
    started = time.monotonic()
    d = adaptive_design(args.min, args.max, args.threshold, args.confidence)
    first = next(n for n, a in zip(d.looks, d.pass_at, strict=True) if a <= n)
    print(
        f"seed {args.seed}, {args.reps} repetitions; replicas min {args.min} max {args.max}, min_pass_rate "
        f"{args.threshold:g}, confidence {args.confidence:g} (alpha {d.alpha:g} per side), futility {d.futility:g}"
    )
    print(
        f"adaptive design: {len(d.looks)} looks; first PASS possible at replica {first}; exact alpha spent at "
        f"p = threshold: PASS {d.error_pass:.4f}, FAIL {d.error_fail:.4f}"
    )
    print(f"\n1. The mix ({len(MIX)} scenarios x 4 cells), per run: episodes paid, false and inconclusive shares")
    print(HEADER + "\n" + HEADER2)
    simulated, expected = simulate(MIX, d, args.reps, args.seed), exact(MIX, d)
    print(simulated.row(f"simulated ({args.reps})"))
    print(expected.row("exact expectation"))
    met = simulated.saved >= 0.4 and simulated.adaptive_false <= simulated.fixed_false
    print(
        f"target (>= 40% fewer episodes at the same or lower false-verdict rate): {'MET' if met else 'NOT MET'}"
        f" (saved {simulated.saved:.1%}; false {simulated.adaptive_false:.5f} vs {simulated.fixed_false:.5f})"
    )

    worst_reps = 25 * args.reps
    tally = worst_case(d, worst_reps, args.seed)
    print(f"\n2. Worst case, {worst_reps} single cells at p = threshold (stated limit {d.alpha:g} each):")
    for rule in ("fixed", "adaptive"):
        op = fixed_operating(d.max_replicas, d.min_pass_rate, d.min_pass_rate, d.confidence)
        op = op if rule == "fixed" else adaptive_operating(d, d.min_pass_rate)
        print(
            f"  {rule:<8} FAIL (false) {tally[f'{rule} fail'] / worst_reps:.4f} (exact {op.fail_probability:.4f})"
            f"   PASS (limit of false PASS) {tally[f'{rule} pass'] / worst_reps:.4f} (exact {op.pass_probability:.4f})"
        )

    print("\n3. Other settings, same mix, exact expectations (no sampling):")
    print(HEADER + "\n" + HEADER2)
    for threshold in (0.7, 0.8, 0.9):
        for mx in (30, 40, 50, 60, 100):
            other = adaptive_design(args.min, mx, threshold, args.confidence)
            print(exact(MIX, other).row(f"t {threshold:g}, max {mx}"))

    reps = args.compare_reps
    print(f"\n4. compare (Fisher + Holm; PASS within a margin), {reps} seeded pairs, <= {d.max_replicas} replicas:")
    cases = [
        ("same agent, fixed-N", MIX, False, 0.1),
        ("same agent, fixed-N", MIX, False, 0.2),
        ("same agent, adaptive", MIX, True, 0.1),
        ("regressed, fixed-N", modified(MIX, REGRESSED), False, 0.1),
        ("regressed, adaptive", modified(MIX, REGRESSED), True, 0.1),
        ("subtle drop, fixed-N", modified(MIX, SUBTLE), False, 0.1),
    ]
    for label, cand, adaptive, margin in cases:
        verdicts = compare_verdicts(MIX, cand, d, reps, args.seed, adaptive, margin)
        print(f"  {label:<21} margin {margin:g}: {shares(verdicts, reps)}")
    print(f"\nregressed: {REGRESSED}; subtle: {SUBTLE}; took {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
