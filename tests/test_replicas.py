"""Replicas: the aggregation rules on a cell that fails one run in three, pass@k and pass^k, and a cell's reason
over its replicas' episodes."""

from __future__ import annotations

import pytest

from flakeproxy.judging.cells import non_passes
from flakeproxy.judging.replicas import aggregate_replicas, pass_at_k, pass_hat_k
from flakeproxy.results import EpisodeVerdict

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


def _verdicts(*outcomes: str) -> list[EpisodeVerdict]:
    """Two prompts per replica, in order: replica 0's two, replica 1's two, ..."""
    return [
        EpisodeVerdict(episode=f"e{i}", prompt=f"p{i % 2}", replica=i // 2, outcome=o, reason=f"{o} in e{i}")  # type: ignore[arg-type]
        for i, o in enumerate(outcomes)
    ]


@pytest.mark.parametrize(
    ("outcomes", "said"),
    [
        (["fail"] * 4, "; 4 of 4 episodes failed; first: fail in e0"),  # not "(and 1 more episode)": replica 0's own
        (["pass", "fail", "pass", "pass"], "; 1 of 4 episodes failed; first: fail in e1"),
        (["error", "pass", "pass", "fail"], "; 1 of 4 episodes failed and 1 could not be judged; first: fail in e3"),
        (["error", "error", "pass", "pass"], "; 2 of 4 episodes could not be judged; first: error in e0"),
        (
            ["not_applicable", "fail", "not_applicable", "fail"],
            "; 2 of 2 judged episodes failed (2 more n/a); first: fail in e1",
        ),
        (["pass", "not_applicable", "pass", "pass"], ""),
    ],
)
def test_a_cells_reason_counts_every_episode_of_every_replica(outcomes: list[str], said: str) -> None:
    assert non_passes(_verdicts(*outcomes)) == said
