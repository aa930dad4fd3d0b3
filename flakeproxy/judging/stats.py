"""Verdicts with confidence: binomial intervals and the rate rule (pure; stdlib and pydantic only).

Design note (issue 26). A cell judged by n replicas, k of them passing, is n draws from an unknown true pass
rate p. Four small modules answer its questions:

- here: the interval for p (Wilson score, or exact Clopper-Pearson) and the **rate rule**
  (`replica_aggregation: rate`, `min_pass_rate`): PASS when the lower bound is at or above the threshold,
  FAIL when the upper bound is below it, INCONCLUSIVE otherwise.
- `stats_sequential`: **adaptive replicas** (`run.replicas: {min, max}`): which cells are settled after each
  look, or how many more replicas an open cell needs; `stats_plan`: how many replicas tell a pass rate from
  the threshold, fixed and adaptive (`flakeproxy plan`).
- `stats_compare`: **baseline vs candidate** (`flakeproxy compare`): per-cell change and PASS/BLOCK/INCONCLUSIVE.

The rate rule uses the exact Clopper-Pearson two-sided interval at `scoring.confidence` (default 0.95),
never Wilson. Its lower bound is at or above the threshold t exactly when P_t(X >= k) <= (1 - c) / 2, so for
every true p < t a false PASS has probability at most (1 - c) / 2, and likewise a false FAIL for p >= t: a
guarantee at every n and p, not an approximation. Wilson's interval is narrower and closer to nominal on
average, but its one-sided error runs above nominal for p near 0 or 1 (Brown, Cai and DasGupta 2001),
exactly where agent pass rates and thresholds (0.8-0.95) sit. Wilson is kept for display and for
Newcombe's difference interval in `stats_compare`.

**Error statement.** A false verdict is PASS when p < min_pass_rate, or FAIL when p >= min_pass_rate. Every
verdict flakeproxy derives from replicas, fixed or adaptive, keeps the chance of a false verdict per cell at
or below alpha = (1 - confidence) / 2 (2.5% at 0.95): the fixed rule by the exact interval, the adaptive rule
by exact alpha spending over its looks (see `stats_sequential`). It is a per-cell statement; across many
cells some false verdicts are expected (at most alpha x cells on average).

**A floor that no rule escapes.** Any rule that can PASS after n straight passes is falsely passed with
chance t^n by an agent just below t, so PASS needs n >= log(alpha) / log(t) replicas: 17 at t = 0.8, 36 at
t = 0.9, 72 at t = 0.95 (alpha = 0.025). `flakeproxy plan` must say so when max is below it.

**How INCONCLUSIVE counts (recommendation for the integration).** INCONCLUSIVE is its own outcome in
results.json and every report (terminal, JSON, JUnit as a skipped case with the reason, HTML, Markdown),
listed with its k/n and interval. In the severity-weighted score it is left out like not-applicable (it
is neither a pass nor a failure we could show), and the report says how many cells it left out. A critical
cell that is INCONCLUSIVE never lets the run PASS. Exit codes: recommend a new code 4, "inconclusive: no
failure shown, but not enough replicas to pass", returned when nothing FAILed and some gating cell is
INCONCLUSIVE; a FAIL anywhere still wins with 1. A distinct code lets CI retry with more replicas (or
treat it as a soft gate) without parsing output; mapping it onto 1 would make "the agent breaks its rule"
and "we could not tell" look the same, which is the confusion the issue is about. `compare` uses the same
codes: 0 PASS, 1 BLOCK, 4 INCONCLUSIVE.
"""

from __future__ import annotations

from math import exp, fsum, lgamma, log, log1p, sqrt
from statistics import NormalDist
from typing import Literal

from pydantic import BaseModel, ConfigDict

Sided = Literal["two", "lower", "upper"]
Method = Literal["wilson", "clopper_pearson"]
RateOutcome = Literal["pass", "fail", "inconclusive"]


class StatsModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Interval(StatsModel):
    """Bounds for a pass rate. sided "lower" means [low, 1] is the one-sided interval (high is 1); "upper" the
    reverse. confidence is the coverage of the whole interval, two-sided or one-sided."""

    low: float
    high: float
    confidence: float
    method: Method
    sided: Sided = "two"

    def text(self) -> str:
        return f"{percent(self.confidence)} interval {self.low:.2f}-{self.high:.2f}"


class RateVerdict(StatsModel):
    """The rate rule's verdict on one cell, with what a user needs to read it."""

    outcome: RateOutcome
    passes: int
    replicas: int
    min_pass_rate: float
    interval: Interval
    reason: str


def percent(confidence: float) -> str:
    return f"{confidence * 100:g}%"


def check_counts(k: int, n: int) -> None:
    if n <= 0:
        raise ValueError(f"a pass rate needs at least one judged replica, got n={n}")
    if not 0 <= k <= n:
        raise ValueError(f"passes must be between 0 and the {n} replicas, got {k}")


def check_level(name: str, value: float) -> None:
    if not 0 < value < 1:
        raise ValueError(f"{name} must be between 0 and 1 (exclusive), got {value}")


def tail_alpha(confidence: float, sided: Sided) -> float:
    """The probability left in each bounded tail."""
    check_level("confidence", confidence)
    return (1 - confidence) / 2 if sided == "two" else 1 - confidence


def wilson(k: int, n: int, confidence: float = 0.95, sided: Sided = "two") -> Interval:
    """Wilson's score interval (Wilson 1927): the p whose normal score test does not reject k of n."""
    check_counts(k, n)
    z = NormalDist().inv_cdf(1 - tail_alpha(confidence, sided))
    phat, z2 = k / n, z * z
    center = (phat + z2 / (2 * n)) / (1 + z2 / n)
    half = z * sqrt(phat * (1 - phat) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low = 0.0 if k == 0 or sided == "upper" else max(0.0, center - half)
    high = 1.0 if k == n or sided == "lower" else min(1.0, center + half)
    return Interval(low=low, high=high, confidence=confidence, method="wilson", sided=sided)


def clopper_pearson(k: int, n: int, confidence: float = 0.95, sided: Sided = "two") -> Interval:
    """The exact interval (Clopper and Pearson 1934): the lower bound is the p with P_p(X >= k) = alpha,
    the upper the p with P_p(X <= k) = alpha, alpha the tail probability; solved on the binomial tail
    (equal to the beta quantiles, computed without scipy)."""
    check_counts(k, n)
    alpha = tail_alpha(confidence, sided)
    low = 0.0 if sided == "upper" else _exact_lower(k, n, alpha)
    high = 1.0 if sided == "lower" else 1.0 - _exact_lower(n - k, n, alpha)
    return Interval(low=low, high=high, confidence=confidence, method="clopper_pearson", sided=sided)


def _exact_lower(k: int, n: int, alpha: float) -> float:
    """The p with P_p(X >= k) = alpha: Newton's method on the tail, kept inside a shrinking bracket."""
    if k == 0:
        return 0.0
    if k == n:
        return float(alpha ** (1 / n))  # closed form: P_p(X >= n) = p^n
    lo, hi, p = 0.0, 1.0, k / n
    for _ in range(200):
        excess = upper_tail(k, n, p) - alpha
        lo, hi = (lo, p) if excess > 0 else (p, hi)
        slope = n * exp(_log_pmf(n - 1, k - 1, p))  # d/dp P_p(X >= k)
        guess = p - excess / slope if slope > 0 else lo
        step = guess if lo < guess < hi else (lo + hi) / 2
        if abs(step - p) <= 1e-15 * p or hi - lo <= 1e-15 * hi:
            return step
        p = step
    return p  # pragma: no cover - the bracket halves at least every other step


def _log_pmf(n: int, i: int, p: float) -> float:
    return lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) + i * log(p) + (n - i) * log1p(-p)


def binomial_pmf(n: int, p: float) -> list[float]:
    """P_p(X = i) for i = 0..n, in log space so that n in the thousands neither overflows nor underflows."""
    return _pmf_range(n, p, 0, n)


def _pmf_range(n: int, p: float, lo: int, hi: int) -> list[float]:
    if p <= 0.0 or p >= 1.0:
        return [float(i == (n if p >= 1.0 else 0)) for i in range(lo, hi + 1)]
    return [exp(_log_pmf(n, i, p)) for i in range(lo, hi + 1)]


def upper_tail(k: int, n: int, p: float) -> float:
    """P_p(X >= k) for X ~ Binomial(n, p)."""
    return fsum(_pmf_range(n, p, max(k, 0), n))


def lower_tail(k: int, n: int, p: float) -> float:
    """P_p(X <= k) for X ~ Binomial(n, p)."""
    return fsum(_pmf_range(n, p, 0, min(k, n)))


def pass_floor(n: int, threshold: float, alpha: float) -> int:
    """The fewest passes of n that PASS: the smallest k with P_t(X >= k) <= alpha (the exact lower bound at
    one-sided level alpha is then >= t); n + 1 when no k does."""
    pmf, tail = binomial_pmf(n, threshold), 0.0
    for k in range(n, -1, -1):
        if tail + pmf[k] > alpha:
            return k + 1
        tail += pmf[k]
    return 0


def fail_ceiling(n: int, threshold: float, alpha: float) -> int:
    """The most passes of n that FAIL: the largest k with P_t(X <= k) < alpha (the exact upper bound is then
    below t); -1 when no k does."""
    pmf, tail = binomial_pmf(n, threshold), 0.0
    for k in range(n + 1):
        if tail + pmf[k] >= alpha:
            return k - 1
        tail += pmf[k]
    return n


def rate_verdict(passes: int, replicas: int, min_pass_rate: float, confidence: float = 0.95) -> RateVerdict:
    """The rate rule on k passes of n replicas: PASS when the exact two-sided interval's lower bound is at or
    above min_pass_rate, FAIL when its upper bound is below it, INCONCLUSIVE otherwise."""
    check_counts(passes, replicas)
    check_min_pass_rate(min_pass_rate)
    ci = clopper_pearson(passes, replicas, confidence)
    alpha = tail_alpha(confidence, "two")
    if passes >= pass_floor(replicas, min_pass_rate, alpha):
        outcome: RateOutcome = "pass"
    elif passes <= fail_ceiling(replicas, min_pass_rate, alpha):
        outcome = "fail"
    else:
        outcome = "inconclusive"
    return RateVerdict(
        outcome=outcome,
        passes=passes,
        replicas=replicas,
        min_pass_rate=min_pass_rate,
        interval=ci,
        reason=rate_reason(outcome, passes, replicas, min_pass_rate, ci),
    )


def check_min_pass_rate(min_pass_rate: float) -> None:
    if not 0 < min_pass_rate < 1:
        raise ValueError(
            f"min_pass_rate must be between 0 and 1 (exclusive), got {min_pass_rate}; "
            "for 'every replica passes' use replica_aggregation: all"
        )


def rate_reason(outcome: RateOutcome, k: int, n: int, threshold: float, ci: Interval) -> str:
    """One line: '9/10 passed, 95% interval 0.56-1.00 straddles 0.80'."""
    low, high = _digits(ci.low, threshold), _digits(ci.high, threshold)
    t = f"{threshold:.2f}" if round(threshold, 2) == threshold else f"{threshold:g}"
    span = f"{percent(ci.confidence)} interval {low}-{high}"
    relation = {"pass": "is at or above", "fail": "is below", "inconclusive": "straddles"}[outcome]
    return f"{k}/{n} passed, {span} {relation} {t}"


def _digits(bound: float, threshold: float) -> str:
    """The bound with 2 decimals, or more when 2 would print it as the threshold, 0 or 1 it differs from."""
    marks = [m for m in (threshold, 0.0, 1.0) if m != bound]
    for places in (2, 3, 4, 5):
        text = f"{bound:.{places}f}"
        if all(float(text) != round(m, places) for m in marks):
            return text
    return f"{bound:.6f}"
