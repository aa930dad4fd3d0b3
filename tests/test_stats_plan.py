"""Planning replicas: exact verdict probabilities against enumeration, sample sizes against an independent count."""

from __future__ import annotations

from math import comb

import pytest

from flakeproxy.judging.stats_plan import adaptive_operating, fixed_operating, min_replicas_to_pass, plan_replicas
from flakeproxy.judging.stats_sequential import adaptive_design
from tests.test_stats_sequential import enumerate_verdicts


@pytest.mark.parametrize(
    ("threshold", "confidence", "floor"),
    [
        (0.8, 0.95, 17),  # log(0.025) / log(0.8) = 16.53
        (0.9, 0.95, 36),  # 35.01
        (0.95, 0.95, 72),  # 71.92
        (0.5, 0.95, 6),  # 5.32
        (0.8, 0.9, 14),  # log(0.05) / log(0.8) = 13.42
    ],
)
def test_the_floor_no_rule_escapes(threshold: float, confidence: float, floor: int) -> None:
    assert min_replicas_to_pass(threshold, confidence) == floor


@pytest.mark.parametrize("p", [0.0, 0.3, 0.55, 0.6, 0.75, 0.9, 1.0])
def test_adaptive_operating_matches_enumeration(p: float) -> None:
    """The forward dynamic programme against all 2^12 sequences run through adaptive_step."""
    d = adaptive_design(2, 12, 0.6)
    by_enumeration = enumerate_verdicts(d, p)
    op = adaptive_operating(d, p)
    assert (op.pass_probability, op.fail_probability, op.inconclusive_probability) == pytest.approx(
        (by_enumeration["pass"], by_enumeration["fail"], by_enumeration["inconclusive"]), abs=1e-12
    )


def test_adaptive_operating_expected_replicas_by_hand() -> None:
    """A perfect agent settles at the first look that can PASS (18 of 2..30 at 0.8); a broken one at the first
    that can FAIL (4): see test_the_first_boundaries_by_hand."""
    d = adaptive_design(2, 30, 0.8)
    assert adaptive_operating(d, 1.0).expected_replicas == pytest.approx(18.0)
    assert adaptive_operating(d, 0.0).expected_replicas == pytest.approx(4.0)


def test_fixed_operating_by_hand() -> None:
    """17 replicas at 0.8 PASS only at 17/17 and FAIL at 9 or fewer (test_stats): at p = 0.9 that is 0.9^17 and
    the sum of C(17, i) 0.9^i 0.1^(17 - i) for i <= 9."""
    op = fixed_operating(17, 0.9, 0.8)
    assert op.pass_probability == pytest.approx(0.9**17, rel=1e-12)
    assert op.fail_probability == pytest.approx(sum(comb(17, i) * 0.9**i * 0.1 ** (17 - i) for i in range(10)))
    assert op.expected_replicas == 17


def power_by_hand(n: int, p: float, threshold: float) -> float:
    """The fixed rule's chance of PASS for p > threshold, counted with math.comb (independent of the module)."""
    tail = [sum(comb(n, i) * threshold**i * (1 - threshold) ** (n - i) for i in range(k, n + 1)) for k in range(n + 2)]
    floor = next(k for k in range(n + 2) if tail[k] <= 0.025)
    return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(floor, n + 1))


@pytest.mark.parametrize("p", [0.95, 0.97])
def test_fixed_replicas_are_the_smallest_n_with_the_power(p: float) -> None:
    plan = plan_replicas(p, 0.8)
    expected = next(n for n in range(1, 200) if power_by_hand(n, p, 0.8) >= 0.8)
    assert plan.fixed_replicas == expected


@pytest.mark.parametrize(
    ("p", "fixed", "adaptive_max", "expected"),
    [
        (1.0, 17, 17, 17.0),  # every rule passes a perfect agent exactly when n/n can PASS: n >= 17
        (0.0, 3, 3, 3.0),  # 0.2^2 = 0.04 >= 0.025 > 0.2^3: FAIL needs 3 failures; design 2..3 spends it all at 3
    ],
)
def test_plan_replicas_at_the_extremes(p: float, fixed: int, adaptive_max: int, expected: float) -> None:
    plan = plan_replicas(p, 0.8)
    assert (plan.fixed_replicas, plan.adaptive_max, plan.adaptive_expected) == (fixed, adaptive_max, expected)
    assert plan.min_replicas_to_pass == 17


def test_the_adaptive_plan_reaches_its_power_and_pays_less_on_average() -> None:
    plan = plan_replicas(0.95, 0.8)
    assert plan.adaptive_max is not None and plan.adaptive_expected is not None and plan.fixed_replicas is not None
    d = adaptive_design(2, plan.adaptive_max, 0.8)
    assert adaptive_operating(d, 0.95).pass_probability >= 0.8
    assert plan.adaptive_expected < plan.fixed_replicas < plan.adaptive_max


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0.8, 0.8), "differ from min_pass_rate, got 0.8"),
        ((1.2, 0.8), r"must be in \[0, 1\] and differ from min_pass_rate, got 1.2"),
        ((0.9, 0.8, 0.95, 1.0), "power must be between 0 and 1"),
    ],
)
def test_bad_plans_say_what_is_wrong(args: tuple[float, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        plan_replicas(*args)
