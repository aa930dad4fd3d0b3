"""Baseline vs candidate: Fisher's exact test, Newcombe's interval and Holm by hand; the verdict's three outcomes."""

from __future__ import annotations

from math import comb

import pytest

from flakeproxy.judging.stats_compare import (
    Counts,
    compare_runs,
    fisher_exact,
    holm,
    newcombe,
    replicas_to_block,
)


def c(passes: int, replicas: int) -> Counts:
    return Counts(passes=passes, replicas=replicas)


@pytest.mark.parametrize(
    ("base", "cand", "one_sided", "two_sided"),
    [
        # Fisher's lady tasting tea (Fisher 1935): 4 of 4 vs 0 of 4; the one table as extreme is 1 of C(8, 4) = 70
        (c(4, 4), c(0, 4), 1 / 70, 2 / 70),
        # 10/10 vs 5/10: X (baseline passes) given 15 passes of 20; P(X = 10) = C(15, 10) C(5, 0) / C(20, 10)
        # = 3003 / 184756, and X = 5 is as probable: two-sided 6006 / 184756
        (c(10, 10), c(5, 10), 3003 / 184756, 6006 / 184756),
        # 5/10 vs 5/10: the observed table is the likeliest, so two-sided is 1; by symmetry of
        # sum_x C(10, x)^2 = C(20, 10), P(X >= 5) = (C(20, 10) + C(10, 5)^2) / 2 / C(20, 10)
        (c(5, 10), c(5, 10), (184756 + 252**2) / 2 / 184756, 1.0),
        # an improvement is no regression: P(X >= 0) = 1
        (c(0, 4), c(4, 4), 1.0, 2 / 70),
    ],
)
def test_fisher_exact_by_hand(base: Counts, cand: Counts, one_sided: float, two_sided: float) -> None:
    assert fisher_exact(base, cand) == pytest.approx((one_sided, two_sided), rel=1e-12)
    assert comb(20, 10) == 184756  # the denominators above


@pytest.mark.parametrize(
    ("base", "cand", "low", "high"),
    [
        # Newcombe (1998), Statistics in Medicine 17:873-890, Table II, method 10, examples (a), (b), (d)-(h);
        # his difference is the first proportion minus the second, here candidate minus baseline
        (c(48, 80), c(56, 70), 0.0524, 0.3339),
        (c(3, 10), c(9, 10), 0.1705, 0.8090),
        (c(0, 29), c(5, 56), -0.0381, 0.1926),
        (c(0, 20), c(0, 10), -0.1611, 0.2775),
        (c(0, 10), c(0, 10), -0.2775, 0.2775),
        (c(0, 20), c(10, 10), 0.6791, 1.0),
        (c(0, 10), c(10, 10), 0.6075, 1.0),
    ],
)
def test_newcombe_against_the_published_table(base: Counts, cand: Counts, low: float, high: float) -> None:
    assert newcombe(base, cand) == pytest.approx((low, high), abs=5e-5)


def test_holm_by_hand() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max 0.06 for the last
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_a_significant_drop_blocks_with_its_numbers() -> None:
    base = {"completes @ tool-503": c(30, 30), "no_pii @ tool-503": c(30, 30), "completes @ calm": c(29, 30)}
    cand = {"completes @ tool-503": c(12, 30), "no_pii @ tool-503": c(30, 30), "completes @ calm": c(30, 30)}
    result = compare_runs(base, cand)
    # Fisher one-sided for 30/30 vs 12/30: P(X = 30 | 42 passes of 60) = C(42, 30) / C(60, 30); Holm x 3
    p = comb(42, 30) / comb(60, 30)
    drop = next(cell for cell in result.cells if cell.cell == "completes @ tool-503")
    assert (drop.p_regression, drop.p_adjusted, drop.status) == (pytest.approx(p), pytest.approx(3 * p), "regressed")
    assert (drop.base_rate, drop.candidate_rate, drop.change) == (1.0, 0.4, pytest.approx(-0.6))
    assert drop.change_low < -0.4 < drop.change_high < 0
    assert result.verdict == "block"
    assert result.reason == (
        "1 of 3 cells regressed (Holm-adjusted one-sided Fisher p <= 0.025): completes @ tool-503 1.00 -> 0.40 "
        f"(p={3 * p:.2g})"
    )


def test_enough_replicas_and_no_drop_pass() -> None:
    """200/200 both sides: Wilson's lower bound 200 / 203.84 = 0.9812, so the change's lower bound is -0.019."""
    same = {"a @ s1": c(200, 200), "b @ s1": c(195, 200)}
    result = compare_runs(same, dict(same) | {"new @ s2": c(3, 10)})
    assert result.verdict == "pass"
    assert result.reason == "no cell regressed; all 2 cells within 0.1 of the baseline (95% Newcombe intervals)"
    assert result.only_in_candidate == ("new @ s2",) and result.only_in_base == ()


def test_too_few_replicas_are_inconclusive_not_a_pass() -> None:
    same = {"a @ s1": c(10, 10), "b @ s1": c(10, 10)}
    result = compare_runs(same, same)
    assert (result.verdict, result.reason) == (
        "inconclusive",
        "no regression shown, but 2 of 2 cells could have dropped by more than 0.1",
    )


def test_a_baseline_cell_missing_from_the_candidate_or_not_judged_there_keeps_it_from_passing() -> None:
    """A cell the candidate has with only ERROR or n/a replicas is there, not missing: it was not judged."""
    base = {"a @ s1": c(200, 200), "b @ s2": c(200, 200), "c @ s3": c(5, 5), "d @ s3": c(0, 0)}
    cand = {"a @ s1": c(200, 200), "c @ s3": c(0, 0), "d @ s3": c(4, 5)}  # s2 not run; c judged no replica
    result = compare_runs(base, cand)
    assert result.verdict == "inconclusive" and result.only_in_base == ("b @ s2",)
    assert result.not_judged_in_candidate == ("c @ s3",) and result.not_judged_in_base == ("d @ s3",)
    assert result.only_in_candidate == ()  # d was in the baseline too: not new
    assert result.reason == (
        "no regression shown, but 1 baseline cells missing from the candidate and 1 baseline cells not judged in "
        "the candidate (only ERROR or n/a there)"
    )


@pytest.mark.parametrize(
    ("base", "cand", "message"),
    [
        ({"a": c(3, 3)}, {"b": c(3, 3)}, "share no cell with judged replicas: nothing to compare"),
        ({"a": c(0, 0)}, {"a": c(3, 3)}, "share no cell with judged replicas"),
        ({"a": c(4, 3)}, {"a": c(3, 3)}, "between 0 and the 3 replicas, got 4"),
    ],
)
def test_nothing_to_compare_is_an_error(base: dict[str, Counts], cand: dict[str, Counts], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compare_runs(base, cand)


def test_the_same_counts_never_block() -> None:
    for k in range(0, 31, 3):
        cells = {f"cell{i}": c(k, 30) for i in range(5)}
        assert compare_runs(cells, cells).verdict != "block"


def test_a_large_drop_three_replicas_cannot_show_says_how_many_would() -> None:
    """3/3 -> 0/3 among 58 cells (a new user's trial): Fisher's one-sided p is 1 / C(6, 3) = 0.05, Holm x 58: 1.
    At n a side the same rates give 1 / C(2n, n): x 58 <= 0.025 first at n = 7 (C(14, 7) = 3432 -> 0.0169;
    C(12, 6) = 924 -> 0.063). And at 7 replicas a side the comparison does BLOCK, as the trial's did."""
    assert 58 / comb(12, 6) > 0.025 >= 58 / comb(14, 7)
    assert replicas_to_block(c(3, 3), c(0, 3), cells=58, alpha=0.025) == 7
    assert replicas_to_block(c(3, 3), c(3, 3), cells=58, alpha=0.025) is None  # no drop: nothing to decide
    assert replicas_to_block(c(30, 30), c(29, 30), cells=58, alpha=0.025) == 346  # a 3-point drop from 100%
    assert replicas_to_block(c(50, 100), c(49, 100), cells=58, alpha=0.025) is None  # 1 point at 50%: beyond 1000
    for n, rate in ((3, "inconclusive"), (7, "regressed")):
        base = {f"same{i}": c(n, n) for i in range(56)} | {"drop": c(n, n), "drop-low": c(n, n)}
        cand = {f"same{i}": c(n, n) for i in range(56)} | {"drop": c(0, n), "drop-low": c(0, n)}
        result = compare_runs(base, cand, severities={"drop": "critical", "drop-low": "low", "same0": "critical"})
        assert [x.cell for x in result.cells[:3]] == ["drop", "drop-low", "same0"]  # the critical drop first
        assert result.cells[0].status == rate
    three = compare_runs(
        {f"same{i}": c(3, 3) for i in range(56)} | {"drop": c(3, 3), "drop-low": c(3, 3)},
        {f"same{i}": c(3, 3) for i in range(56)} | {"drop": c(0, 3), "drop-low": c(0, 3)},
        severities={"drop": "critical", "drop-low": "low"},
    )
    assert three.cells[0].replicas_to_block == 7 and three.cells[2].replicas_to_block is None
    assert three.reason == (
        "no regression shown, but 58 of 58 cells could have dropped by more than 0.1; 2 dropped by more than 0.1 "
        "(too few replicas to show it), the worst drop [critical] 1.00 -> 0.00: the same rates would BLOCK at 7 "
        "replicas a side"
    )


@pytest.mark.parametrize(
    ("base", "cand", "cells"),
    [(c(10, 10), c(7, 10), 1), (c(9, 12), c(4, 12), 5), (c(20, 20), c(16, 20), 10), (c(5, 8), c(1, 6), 3)],
)
def test_replicas_to_block_is_the_fewest_by_the_exact_test(base: Counts, cand: Counts, cells: int) -> None:
    """The screen never hides an n the exact test would accept: a plain scan with fisher_exact alone agrees."""
    p1, p2 = base.passes / base.replicas, cand.passes / cand.replicas

    def blocks(n: int) -> bool:
        b, k = int(p1 * n + 0.5), int(p2 * n + 0.5)
        return b > k and fisher_exact(c(b, n), c(k, n))[0] * cells <= 0.025

    start = max(base.replicas, cand.replicas)
    fewest = next((n for n in range(start, 301) if blocks(n)), None)
    assert fewest is not None and replicas_to_block(base, cand, cells, 0.025) == fewest
