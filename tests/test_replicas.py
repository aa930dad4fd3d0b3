"""Replicas: the aggregation rules on a cell that fails one run in three, pass@k and pass^k."""

from __future__ import annotations

import pytest

from flakeproxy.judging.replicas import aggregate_replicas, pass_at_k, pass_hat_k

ONE_IN_THREE = ["pass", "fail", "pass"]


@pytest.mark.parametrize(
    ("rule", "k", "outcome"),
    [
        ("all", 1, "fail"),
        ("majority", 1, "pass"),
        ("mean", 1, "pass"),
        ("at_least_k", 2, "pass"),
        ("at_least_k", 3, "fail"),
        ("pass_at_k", 1, "pass"),
        ("pass_at_k", 2, "pass"),
    ],
)
def test_rules(rule: str, k: int, outcome: str) -> None:
    got, reason = aggregate_replicas(ONE_IN_THREE, [1.0, 0.0, 1.0], rule, k)  # type: ignore[arg-type]
    assert got == outcome and reason.startswith("2/3 replicas passed")


def test_pass_at_k_and_pass_hat_k() -> None:
    assert pass_at_k(3, 2, 1) == pytest.approx(2 / 3, abs=1e-4)
    assert pass_at_k(3, 2, 2) == 1.0  # any two of three include a pass
    assert pass_hat_k(3, 2, 2) == pytest.approx(1 / 3, abs=1e-4)  # both passing: 1 pair of 3
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_at_k(3, 0, 2) == 0.0


def test_errors_count_as_not_passed() -> None:
    assert aggregate_replicas(["pass", "error", "error"], [1, 0, 0], "majority", 1)[0] == "error"
