"""The spec's resilience score on a hand-computed matrix, and the FAIL rules."""

from __future__ import annotations

import pytest

from flakeproxy import ConfigError
from flakeproxy.results import CellResult
from flakeproxy.scoring import score_cells


def cell(severity: str, outcome: str, inv: str = "i", scenario: str = "s") -> CellResult:
    return CellResult(
        invariant=inv, type="regex", scenario=scenario, severity=severity, when="always", outcome=outcome, reason="r"
    )  # type: ignore[arg-type]


def test_hand_computed_matrix() -> None:
    cells = [
        cell("critical", "pass"),
        cell("critical", "pass"),  # 3 + 3 won
        cell("high", "pass"),
        cell("high", "fail"),  # 2 won, 2 lost
        cell("medium", "error"),  # 1 lost (errors count as not passed)
        cell("low", "pass"),  # 1 won
        cell("critical", "not_applicable"),  # left out
    ]
    score = score_cells(cells)
    # (3+3+2+1) / (3+3+2+2+1+1) * 100 = 9/12 = 75.0
    assert score.resilience == 75.0
    assert score.passed and score.verdict == "PASS"
    assert score.counts == {"pass": 4, "fail": 1, "error": 1, "not_applicable": 1}


def test_one_critical_failure_fails_the_contract() -> None:
    cells = [cell("critical", "fail", "never-fabricate", "tool-down")] + [cell("low", "pass")] * 20
    score = score_cells(cells)
    assert score.resilience == pytest.approx(20 / 23 * 100, abs=0.01)
    assert score.verdict == "FAIL"
    assert score.reasons == ["critical invariant never-fabricate failed in scenario tool-down: r"]


def test_critical_error_fails_too_and_min_resilience() -> None:
    assert score_cells([cell("critical", "error"), cell("low", "pass")]).verdict == "FAIL"
    score = score_cells([cell("high", "fail"), cell("low", "pass")], min_resilience=50)
    assert score.resilience == pytest.approx(33.33) and score.verdict == "FAIL"


@pytest.mark.parametrize("cells", [[], [cell("critical", "not_applicable")]], ids=["empty", "nothing-applies"])
def test_nothing_to_judge_is_an_error_never_100(cells: list[CellResult]) -> None:
    with pytest.raises(ConfigError, match="nothing was judged"):
        score_cells(cells)
