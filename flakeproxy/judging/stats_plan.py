"""Planning replicas for the rate rule (`flakeproxy plan`): exact verdict probabilities and sample sizes.

Everything here is computed exactly from binomial path probabilities, not simulated. "Telling p from the
threshold" means the verdict is the right one for p: PASS when p >= min_pass_rate, FAIL when p is below;
power is its probability. Because replicas are discrete, power is not monotone in n (it saw-tooths), so the
fixed answer is the smallest n that reaches the power, and the adaptive answer the smallest max found by
bisection over max (a max a little below may reach it too).
"""

from __future__ import annotations

from collections.abc import Callable
from math import ceil, log

from flakeproxy.judging.stats import (
    RateOutcome,
    StatsModel,
    binomial_pmf,
    check_level,
    check_min_pass_rate,
    fail_ceiling,
    pass_floor,
    tail_alpha,
)
from flakeproxy.judging.stats_sequential import AdaptiveDesign, adaptive_design, advance

LIMIT = 2000  # the most replicas a plan looks at


class Operating(StatsModel):
    """What a rule does with a cell whose true pass rate is p: verdict probabilities and replicas it costs."""

    true_pass_rate: float
    pass_probability: float
    fail_probability: float
    inconclusive_probability: float
    expected_replicas: float

    def probability(self, outcome: RateOutcome) -> float:
        return {
            "pass": self.pass_probability,
            "fail": self.fail_probability,
            "inconclusive": self.inconclusive_probability,
        }[outcome]


class Plan(StatsModel):
    """How many replicas tell a true pass rate from the threshold, fixed and adaptive."""

    true_pass_rate: float
    min_pass_rate: float
    confidence: float
    power: float
    min_replicas_to_pass: int  # no rule can PASS with fewer (all passing, at this confidence)
    fixed_replicas: int | None  # None: not within LIMIT
    adaptive_max: int | None
    adaptive_expected: float | None  # mean replicas the adaptive rule pays at that max, for this p


def min_replicas_to_pass(min_pass_rate: float, confidence: float = 0.95) -> int:
    """The fewest replicas any rule with this error statement can PASS on: the smallest n with t^n <= alpha."""
    check_min_pass_rate(min_pass_rate)
    return max(1, ceil(log(tail_alpha(confidence, "two")) / log(min_pass_rate) - 1e-9))


def fixed_operating(n: int, p: float, min_pass_rate: float, confidence: float = 0.95) -> Operating:
    """The fixed rate rule on n replicas, for a true pass rate p."""
    alpha = tail_alpha(confidence, "two")
    pmf = binomial_pmf(n, p)
    ok = sum(pmf[pass_floor(n, min_pass_rate, alpha) :])
    bad = sum(pmf[: fail_ceiling(n, min_pass_rate, alpha) + 1])
    return Operating(
        true_pass_rate=p,
        pass_probability=ok,
        fail_probability=bad,
        inconclusive_probability=max(0.0, 1 - ok - bad),
        expected_replicas=n,
    )


def adaptive_operating(design: AdaptiveDesign, p: float) -> Operating:
    """The adaptive rule for a true pass rate p: each path stops at the first look that settles it."""
    dist, n, stops = [1.0], 0, {"pass": 0.0, "fail": 0.0, "inconclusive": 0.0}
    paid = 0.0
    for j, look in enumerate(design.looks):
        dist, n = advance(dist, p, look - n), look
        for k, mass in enumerate(dist):
            verdict = design.verdict_at(j, k) if mass else None
            if verdict is not None:
                stops[verdict] += mass
                paid += mass * look
                dist[k] = 0.0
    return Operating(
        true_pass_rate=p,
        pass_probability=stops["pass"],
        fail_probability=stops["fail"],
        inconclusive_probability=stops["inconclusive"],
        expected_replicas=paid,
    )


def plan_replicas(
    p: float, min_pass_rate: float, confidence: float = 0.95, power: float = 0.8, min_replicas: int = 2
) -> Plan:
    """Replicas to tell a true pass rate p from min_pass_rate with this power: fixed n, and the adaptive max
    (with min_replicas) with the replicas it is then expected to pay."""
    check_min_pass_rate(min_pass_rate)
    check_level("power", power)
    if not 0 <= p <= 1 or p == min_pass_rate:
        raise ValueError(f"the true pass rate must be in [0, 1] and differ from min_pass_rate, got {p}")
    right: RateOutcome = "pass" if p >= min_pass_rate else "fail"

    def fixed_power(n: int) -> float:
        return fixed_operating(n, p, min_pass_rate, confidence).probability(right)

    def adaptive_power(mx: int) -> float:
        design = adaptive_design(min(min_replicas, mx), mx, min_pass_rate, confidence)
        return adaptive_operating(design, p).probability(right)

    fixed = next((n for n in range(1, LIMIT + 1) if fixed_power(n) >= power), None)
    mx = _bisect(adaptive_power, power, max(min_replicas, 1))
    expected = None
    if mx is not None:
        design = adaptive_design(min(min_replicas, mx), mx, min_pass_rate, confidence)
        expected = adaptive_operating(design, p).expected_replicas
    return Plan(
        true_pass_rate=p,
        min_pass_rate=min_pass_rate,
        confidence=confidence,
        power=power,
        min_replicas_to_pass=min_replicas_to_pass(min_pass_rate, confidence),
        fixed_replicas=fixed,
        adaptive_max=mx,
        adaptive_expected=expected,
    )


def _bisect(power_at: Callable[[int], float], target: float, low: int) -> int | None:
    """The smallest max in [low, LIMIT] reaching the target power, by doubling then bisection."""
    hi = low
    while power_at(hi) < target:
        if hi >= LIMIT:
            return None
        low, hi = hi + 1, min(LIMIT, hi * 2)
    while low < hi:
        mid = (low + hi) // 2
        low, hi = (low, mid) if power_at(mid) >= target else (mid + 1, hi)
    return hi
