"""Binomial intervals and the rate rule, against values computed by hand from closed forms (each cited)."""

from __future__ import annotations

from math import comb, sqrt

import pytest

from flakeproxy.judging.stats import (
    clopper_pearson,
    fail_ceiling,
    lower_tail,
    pass_floor,
    rate_verdict,
    upper_tail,
    wilson,
)

Z95 = 1.959963984540054  # the standard normal's 0.975 quantile (two-sided 95%)
Z90 = 1.6448536269514722  # its 0.95 quantile (one-sided 95%)


def wilson_by_hand(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson (1927), as in Agresti and Coull (1998): (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)."""
    p = k / n
    center, half = p + z * z / (2 * n), z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (center - half) / (1 + z * z / n), (center + half) / (1 + z * z / n)


@pytest.mark.parametrize(
    ("k", "n", "sided", "low", "high"),
    [
        # 9/10: (0.9 + 0.192073) / 1.384146 -+ 1.416010 * sqrt(0.009 + 0.0096036) = 0.788987 -+ 0.193137
        (9, 10, "two", 0.595850, 0.982124),
        # 0/10: the upper bound is z^2 / (n + z^2) = 3.841459 / 13.841459; 10/10: the lower is n / (n + z^2)
        (0, 10, "two", 0.0, 0.277533),
        (10, 10, "two", 0.722467, 1.0),
        # one-sided 95% (z = 1.644854, z^2 = 2.705543): 10 / 12.705543 and 2.705543 / 12.705543
        (10, 10, "lower", 0.787058, 1.0),
        (0, 10, "upper", 0.0, 0.212942),
    ],
)
def test_wilson_against_hand_values(k: int, n: int, sided: str, low: float, high: float) -> None:
    ci = wilson(k, n, 0.95, sided)  # type: ignore[arg-type]
    assert (ci.low, ci.high) == pytest.approx((low, high), abs=5e-7)
    z = Z95 if sided == "two" else Z90
    by_hand = wilson_by_hand(k, n, z)
    assert ci.low == pytest.approx(0.0 if sided == "upper" else by_hand[0], abs=1e-12)
    assert ci.high == pytest.approx(1.0 if sided == "lower" else by_hand[1], abs=1e-12)


@pytest.mark.parametrize(
    ("k", "n", "confidence", "sided", "low", "high"),
    [
        # Clopper and Pearson (1934) closed forms at the ends: P_p(X >= n) = p^n and P_p(X <= 0) = (1 - p)^n
        (0, 10, 0.95, "two", 0.0, 1 - 0.025**0.1),  # 0.308497
        (10, 10, 0.95, "two", 0.025**0.1, 1.0),  # 0.691503
        (1, 10, 0.95, "two", 1 - 0.975**0.1, None),  # P_p(X >= 1) = 1 - (1 - p)^n: 0.0025286
        (9, 10, 0.95, "two", None, 0.975**0.1),  # P_p(X <= 9) = 1 - p^n: 0.997471
        (10, 10, 0.95, "lower", 0.05**0.1, 1.0),  # one-sided 95%: 0.741134
        (0, 10, 0.95, "upper", 0.0, 1 - 0.05**0.1),
        # 5/10: 0.1870860-0.8129140, the interval R's binom.test(5, 10) prints (the beta quantiles)
        (5, 10, 0.95, "two", 0.1870860, 0.8129140),
        # 9/10: 0.5549839-0.9974714 (R's binom.test(9, 10)); the lower bound solves 10 p^9 (1 - p) + p^10 = 0.025
        (9, 10, 0.95, "two", 0.5549839, 0.9974714),
    ],
)
def test_clopper_pearson_against_hand_values(
    k: int, n: int, confidence: float, sided: str, low: float | None, high: float | None
) -> None:
    ci = clopper_pearson(k, n, confidence, sided)  # type: ignore[arg-type]
    if low is not None:
        assert ci.low == pytest.approx(low, abs=5e-8)
    if high is not None:
        assert ci.high == pytest.approx(high, abs=5e-8)


def test_clopper_pearson_bounds_solve_their_defining_equations() -> None:
    """Written out by hand for 9/10 and 3/7, independent of the module's binomial code."""
    low = clopper_pearson(9, 10).low
    assert 10 * low**9 * (1 - low) + low**10 == pytest.approx(0.025, abs=1e-12)
    ci = clopper_pearson(3, 7)
    at_least_3 = 1 - sum(comb(7, i) * ci.low**i * (1 - ci.low) ** (7 - i) for i in range(3))
    at_most_3 = sum(comb(7, i) * ci.high**i * (1 - ci.high) ** (7 - i) for i in range(4))
    assert (at_least_3, at_most_3) == pytest.approx((0.025, 0.025), abs=1e-12)


def test_binomial_tails_by_hand() -> None:
    # n = 30, p = 0.8: P(X >= 29) = 30 * 0.8^29 * 0.2 + 0.8^30; P(X <= 0) = 0.2^30
    assert upper_tail(29, 30, 0.8) == pytest.approx(30 * 0.8**29 * 0.2 + 0.8**30, rel=1e-12)
    assert lower_tail(0, 30, 0.8) == pytest.approx(0.2**30, rel=1e-12)
    assert upper_tail(0, 5, 0.3) == pytest.approx(1.0) and lower_tail(5, 5, 0.3) == pytest.approx(1.0)
    assert upper_tail(3000, 3000, 0.999) == pytest.approx(0.999**3000, rel=1e-9)  # no under- or overflow


@pytest.mark.parametrize(
    ("n", "threshold", "floor", "ceiling"),
    [
        # 17 straight passes: 0.8^17 = 0.02252 <= 0.025 < 0.8^16 = 0.02815; FAIL needs 0.2^n < 0.025: n >= 3
        (17, 0.8, 17, 9),
        (16, 0.8, 17, 8),
        # n = 30: P(X >= 29) = 0.01052 <= 0.025 < P(X >= 28) = 0.04418; P(X <= 18) = 0.00949 < 0.025 <= P(X <= 19)
        (30, 0.8, 29, 18),
        (2, 0.8, 3, -1),  # 0.2^2 = 0.04: 2 replicas can neither PASS nor FAIL at 0.8
    ],
)
def test_the_rate_rule_boundaries(n: int, threshold: float, floor: int, ceiling: int) -> None:
    assert pass_floor(n, threshold, 0.025) == floor
    assert fail_ceiling(n, threshold, 0.025) == ceiling


@pytest.mark.parametrize(
    ("k", "n", "outcome", "reason"),
    [
        (9, 10, "inconclusive", "9/10 passed, 95% interval 0.55-0.997 straddles 0.80"),
        (17, 17, "pass", "17/17 passed, 95% interval 0.805-1.00 is at or above 0.80"),
        (16, 16, "inconclusive", "16/16 passed, 95% interval 0.79-1.00 straddles 0.80"),
        (30, 30, "pass", "30/30 passed, 95% interval 0.88-1.00 is at or above 0.80"),
        (2, 10, "fail", "2/10 passed, 95% interval 0.03-0.56 is below 0.80"),
        (0, 3, "fail", "0/3 passed, 95% interval 0.00-0.71 is below 0.80"),
        (0, 2, "inconclusive", "0/2 passed, 95% interval 0.00-0.84 straddles 0.80"),
    ],
)
def test_rate_verdict(k: int, n: int, outcome: str, reason: str) -> None:
    verdict = rate_verdict(k, n, 0.8)
    assert (verdict.outcome, verdict.reason) == (outcome, reason)
    assert verdict.interval == clopper_pearson(k, n, 0.95)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rate_verdict(0, 0, 0.8), "at least one judged replica, got n=0"),
        (lambda: wilson(0, 0), "at least one judged replica, got n=0"),
        (lambda: clopper_pearson(11, 10), "between 0 and the 10 replicas, got 11"),
        (lambda: rate_verdict(5, 10, 1.0), "min_pass_rate must be between 0 and 1 .exclusive., got 1.0; for 'every"),
        (lambda: rate_verdict(5, 10, 0.8, confidence=1.0), "confidence must be between 0 and 1 .exclusive., got 1.0"),
    ],
)
def test_no_data_is_an_error_not_a_verdict(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


GRID = [(k, n) for n in (1, 2, 3, 5, 8, 13, 21, 40, 100) for k in range(n + 1)]


@pytest.mark.parametrize("method", [wilson, clopper_pearson])
def test_bounds_contain_the_rate_and_widen_with_confidence(method: object) -> None:
    for k, n in GRID:
        previous = None
        for confidence in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999):
            ci = method(k, n, confidence)  # type: ignore[operator]
            assert 0.0 <= ci.low <= k / n <= ci.high <= 1.0, (k, n, confidence, ci)
            if previous is not None:
                assert ci.low <= previous.low and ci.high >= previous.high, (k, n, confidence)
            previous = ci
        one_sided = method(k, n, 0.95, "lower")  # type: ignore[operator]
        assert method(k, n, 0.9).low == pytest.approx(one_sided.low, abs=1e-12)  # 90% two-sided = 95% one-sided


def test_exact_interval_is_never_narrower_than_its_tails_allow() -> None:
    """The exact interval's guarantee: at its bounds the tails are exactly alpha (k strictly inside 0..n)."""
    for k, n in GRID:
        if 0 < k < n:
            ci = clopper_pearson(k, n)
            assert upper_tail(k, n, ci.low) == pytest.approx(0.025, abs=1e-9)
            assert lower_tail(k, n, ci.high) == pytest.approx(0.025, abs=1e-9)


@pytest.mark.parametrize("threshold", [0.5, 0.7, 0.8, 0.9, 0.95])
def test_the_verdict_reads_the_interval_it_shows(threshold: float) -> None:
    """PASS exactly when the shown lower bound is at or above the threshold, FAIL when the upper is below."""
    for k, n in GRID:
        verdict = rate_verdict(k, n, threshold)
        expected = (
            "pass"
            if verdict.interval.low >= threshold
            else "fail"
            if verdict.interval.high < threshold
            else "inconclusive"
        )
        assert verdict.outcome == expected, (k, n, threshold, verdict)


@pytest.mark.parametrize("threshold", [0.6, 0.8, 0.9])
def test_the_fixed_rule_keeps_its_error_statement(threshold: float) -> None:
    """For p just below the threshold a false PASS, and at it a false FAIL, has probability <= (1 - c) / 2."""
    for n in range(1, 80):
        floor, ceiling = pass_floor(n, threshold, 0.025), fail_ceiling(n, threshold, 0.025)
        assert upper_tail(floor, n, threshold - 1e-9) <= 0.025
        assert lower_tail(ceiling, n, threshold) < 0.025
