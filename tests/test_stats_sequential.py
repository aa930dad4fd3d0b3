"""Adaptive replicas: boundaries computed by hand, the error guarantee by enumerating every outcome sequence."""

from __future__ import annotations

from itertools import product

import pytest

from flakeproxy.judging.stats import fail_ceiling, pass_floor
from flakeproxy.judging.stats_plan import adaptive_operating
from flakeproxy.judging.stats_sequential import AdaptiveDesign, adaptive_design, adaptive_step

RISK = "(adaptive 2-30, min_pass_rate 0.8, false-verdict risk <= 2.5%)"


@pytest.mark.parametrize("n", [5, 10, 17, 30])
@pytest.mark.parametrize("threshold", [0.6, 0.8, 0.9])
def test_a_single_look_is_the_fixed_rate_rule(n: int, threshold: float) -> None:
    d = adaptive_design(n, n, threshold)
    assert d.looks == (n,)
    assert (d.pass_at, d.fail_at) == ((pass_floor(n, threshold, 0.025),), (fail_ceiling(n, threshold, 0.025),))


def test_the_first_boundaries_by_hand() -> None:
    """alpha = 0.025 spent as alpha * sqrt(n / 30). Nothing can PASS before 17 (0.8^n > 0.0188 >= the allowance
    there), so the first PASS is at the first n with 0.8^n <= 0.025 * sqrt(n / 30): 0.8^17 = 0.02252 > 0.01882,
    0.8^18 = 0.01801 <= 0.01936. FAIL needs 0.2^n < 0.025 * sqrt(n / 30): 0.04 > 0.00645 (n = 2),
    0.008 > 0.00791 (n = 3), 0.0016 < 0.00913 (n = 4); 1 pass of 4 has 0.0016 + 4 * 0.8 * 0.2^3 = 0.0272."""
    d = adaptive_design(2, 30, 0.8)
    at = {n: (a, b) for n, a, b in zip(d.looks, d.pass_at, d.fail_at, strict=True)}
    assert d.looks == tuple(range(2, 31))
    assert [at[n][0] for n in (2, 16, 17, 18)] == [3, 17, 18, 18]  # n + 1: PASS is not possible there
    assert [at[n][1] for n in (2, 3, 4)] == [-1, -1, 0]
    assert d.error_pass <= d.alpha and d.error_fail <= d.alpha


def enumerate_verdicts(d: AdaptiveDesign, p: float) -> dict[str, float]:
    """Every outcome sequence of max replicas, run through adaptive_step, weighted by its probability at p."""
    total = {"pass": 0.0, "fail": 0.0, "inconclusive": 0.0}
    for seq in product((True, False), repeat=d.max_replicas):
        state = adaptive_step(seq, d)
        assert state.outcome is not None and state.need == 0
        k = sum(seq)
        total[state.outcome] += p**k * (1 - p) ** (d.max_replicas - k)
    return total


DESIGNS = [
    dict(min_replicas=2, max_replicas=12, min_pass_rate=0.6),
    dict(min_replicas=2, max_replicas=12, min_pass_rate=0.6, every=3),
    dict(min_replicas=1, max_replicas=12, min_pass_rate=0.5, futility=0.0),
    dict(min_replicas=3, max_replicas=12, min_pass_rate=0.7, confidence=0.9),
]


@pytest.mark.parametrize("settings", DESIGNS)
def test_the_error_statement_holds_over_every_outcome_sequence(settings: dict[str, float]) -> None:
    """A false PASS (p below the threshold) and a false FAIL (p at or above it) each stay within alpha, summed
    exactly over all 2^12 sequences; and the rule is not vacuous: a perfect agent passes, a broken one fails."""
    d = adaptive_design(**settings)  # type: ignore[arg-type]
    t = d.min_pass_rate
    for p in (t - 1e-9, t - 0.1, t - 0.3):
        assert enumerate_verdicts(d, p)["pass"] <= d.error_pass + 1e-12 <= d.alpha + 1e-12
    for p in (t, t + 0.1, (1 + t) / 2):
        assert enumerate_verdicts(d, p)["fail"] <= d.error_fail + 1e-12 <= d.alpha + 1e-12
    assert enumerate_verdicts(d, 1.0)["pass"] == pytest.approx(1.0)
    assert enumerate_verdicts(d, 0.0)["fail"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    "settings",
    [
        dict(min_replicas=2, max_replicas=30, min_pass_rate=0.8),
        dict(min_replicas=2, max_replicas=30, min_pass_rate=0.8, confidence=0.9),
        dict(min_replicas=2, max_replicas=60, min_pass_rate=0.9),
        dict(min_replicas=5, max_replicas=100, min_pass_rate=0.7, every=5),
        dict(min_replicas=2, max_replicas=200, min_pass_rate=0.95, futility=0.0),
    ],
)
def test_the_error_statement_holds_for_real_sizes(settings: dict[str, float]) -> None:
    """The same statement at sizes too big to enumerate, from the exact path probabilities."""
    d = adaptive_design(**settings)  # type: ignore[arg-type]
    t = d.min_pass_rate
    assert adaptive_operating(d, t - 1e-9).pass_probability <= d.alpha
    assert adaptive_operating(d, t).fail_probability <= d.alpha


@pytest.mark.parametrize(
    ("outcomes", "outcome", "replicas", "need", "reason"),
    [
        ([], None, 0, 2, "0/0 passed; open until the look at replica 2"),
        ([True] * 17, None, 17, 1, "17/17 passed; open until the look at replica 18"),
        ([True] * 18, "pass", 18, 0, f"18/18 passed by replica 18: PASS needs 18 there {RISK}"),
        ([True] * 18 + [False] * 12, "pass", 18, 0, f"18/18 passed by replica 18: PASS needs 18 there {RISK}"),
        ([False] * 4, "fail", 4, 0, f"0/4 passed by replica 4: FAIL at 0 or fewer there {RISK}"),
        ([False] * 4 + [True] * 26, "fail", 4, 0, f"0/4 passed by replica 4: FAIL at 0 or fewer there {RISK}"),
        (
            [True] * 9 + [False] * 2,
            "inconclusive",
            11,
            0,
            f"9/11 passed by replica 11: under 5% chance of PASS or FAIL by replica 30 {RISK}",
        ),
        ([False] + [True] * 29, "pass", 30, 0, f"29/30 passed by replica 30: PASS needs 29 there {RISK}"),
        (
            [False] + [True] * 28 + [False],
            "inconclusive",
            30,
            0,
            f"28/30 passed by replica 30: max reached; PASS needed 29, FAIL 17 or fewer {RISK}",
        ),
        ([True] * 40, "pass", 18, 0, f"18/18 passed by replica 18: PASS needs 18 there {RISK}"),
    ],
)
def test_adaptive_step(outcomes: list[bool], outcome: str | None, replicas: int, need: int, reason: str) -> None:
    """The first look that settles decides (replica order matters); an open cell says when its next look is."""
    state = adaptive_step(outcomes, adaptive_design(2, 30, 0.8))
    assert (state.outcome, state.replicas, state.need, state.reason) == (outcome, replicas, need, reason)
    assert state.settled == (outcome is not None)


def test_looks_every_few_replicas_ask_for_the_next_round() -> None:
    d = adaptive_design(5, 30, 0.8, every=10)
    assert d.looks == (5, 15, 25, 30)
    state = adaptive_step([True] * 7, d)
    assert (state.outcome, state.need, state.reason) == (None, 8, "7/7 passed; open until the look at replica 15")


def test_curtailment_gives_up_exactly_where_no_verdict_can_be_reached() -> None:
    """futility 0: a cell is settled INCONCLUSIVE exactly when no later look can still reach PASS or FAIL.
    By hand at 29 replicas: PASS at 30 needs 29, FAIL 17 or fewer, so 18..27 passes of 29 are settled."""
    d = adaptive_design(2, 30, 0.8, futility=0.0)
    assert d.give_up[d.looks.index(29)] == ((18, 27),) and d.give_up[d.looks.index(30)] == ((18, 28),)
    for j, n in enumerate(d.looks):
        for k in range(d.fail_at[j] + 1, min(d.pass_at[j], n + 1)):
            later = range(j + 1, len(d.looks))
            reachable = any(k + d.looks[i] - n >= d.pass_at[i] or k <= d.fail_at[i] for i in later)
            assert (d.verdict_at(j, k) is None) == reachable, (n, k)


def test_futility_only_adds_to_what_curtailment_gives_up() -> None:
    strict, eager = adaptive_design(2, 30, 0.8, futility=0.0), adaptive_design(2, 30, 0.8, futility=0.2)
    for j, n in enumerate(strict.looks):
        for k in range(n + 1):
            if strict.verdict_at(j, k) is not None:
                assert eager.verdict_at(j, k) == strict.verdict_at(j, k)


def test_the_same_settings_give_the_same_design() -> None:
    assert adaptive_design(2, 30, 0.8) is adaptive_design(2, 30, 0.8)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (dict(min_replicas=5, max_replicas=3), "1 <= min <= max, got min=5, max=3"),
        (dict(min_replicas=0, max_replicas=3), "1 <= min <= max, got min=0, max=3"),
        (dict(every=0), "at least 1 replica apart, got every=0"),
        (dict(futility=1.0), r"futility must be in \[0, 1\), got 1.0"),
        (dict(min_pass_rate=1.0), "min_pass_rate must be between 0 and 1"),
    ],
)
def test_bad_settings_say_what_is_wrong(settings: dict[str, float], message: str) -> None:
    args: dict[str, float] = dict(min_replicas=2, max_replicas=30, min_pass_rate=0.8) | settings
    with pytest.raises(ValueError, match=message):
        adaptive_design(**args)  # type: ignore[arg-type]


def test_looking_repeatedly_with_the_fixed_rule_would_break_the_statement() -> None:
    """Why the spending: the fixed rule's boundaries applied at every look (no early INCONCLUSIVE) PASS an agent
    just below the threshold, and FAIL one at it, more often than alpha: the checks above can fail."""
    d = adaptive_design(2, 12, 0.6)
    naive = d.model_copy(
        update={
            "pass_at": tuple(pass_floor(n, 0.6, 0.025) for n in d.looks),
            "fail_at": tuple(fail_ceiling(n, 0.6, 0.025) for n in d.looks),
            "give_up": ((),) * (len(d.looks) - 1) + (((0, 12),),),
        }
    )
    assert enumerate_verdicts(naive, 0.6 - 1e-9)["pass"] > 0.025
    assert enumerate_verdicts(naive, 0.6)["fail"] > 0.025
