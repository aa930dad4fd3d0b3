"""The spec's resilience score on a hand-computed matrix, and the FAIL rules."""

from __future__ import annotations

import pytest

from flakeproxy import ConfigError
from flakeproxy.judging.scoring import exit_code, score_cells
from flakeproxy.planning.pillars import combine
from flakeproxy.results import CellResult, PillarResult


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


def scored(severity: str, outcome: str, inv: str, score: float) -> CellResult:
    c = cell(severity, outcome, inv)
    return c.model_copy(update={"score": score})


def test_spec_worked_example_one_nice_to_have_fails() -> None:
    """invariants-weights-gates: must_pass (1.0, gate) passes, nice_to_have (0.3) fails: 1 / 1.3 ~ 0.77 < 0.85."""
    cells = [scored("medium", "pass", "must_pass", 1.0), scored("medium", "fail", "nice_to_have", 0.0)]
    weights = {"must_pass": (1.0, True), "nice_to_have": (0.3, False)}
    result = score_cells(cells, weights=weights, pass_threshold=0.85)
    assert result.composite["s"].composite == pytest.approx(0.7692, abs=1e-4)
    assert result.verdict == "FAIL" and "composite 0.7692 < scoring.pass_threshold 0.85 in s" in result.reasons[0]


def test_spec_pattern_tests_pass_one_nice_to_have_fails() -> None:
    """tests_pass (1.0, gate), no_console_log (0.3) fails, small_diff (0.2): (1 + 0.2) / 1.5 = 0.80 < 0.85
    (the spec rounds it to "around 0.83")."""
    weights = {"tests_pass": (1.0, True), "no_console_log": (0.3, False), "small_diff": (0.2, False)}
    cells = [
        scored("medium", "pass", "tests_pass", 1.0),
        scored("medium", "fail", "no_console_log", 0.0),
        scored("medium", "pass", "small_diff", 1.0),
    ]
    result = score_cells(cells, weights=weights, pass_threshold=0.85)
    assert result.composite["s"].composite == pytest.approx(0.8) and result.verdict == "FAIL"
    everything = [c.model_copy(update={"outcome": "pass", "score": 1.0}) for c in cells]
    assert score_cells(everything, weights=weights, pass_threshold=0.85).composite["s"].composite == 1.0


def test_a_failed_gate_forces_zero() -> None:
    weights = {"tests_pass": (1.0, True), "nice": (0.3, False)}
    cells = [scored("medium", "fail", "tests_pass", 0.0), scored("medium", "pass", "nice", 1.0)]
    result = score_cells(cells, weights=weights)
    assert result.composite["s"].composite == 0.0 and result.composite["s"].gate_failed == ["tests_pass"]
    assert result.verdict == "FAIL"


def test_a_scenario_where_nothing_applies_has_no_composite_and_green_passes_the_threshold() -> None:
    """The old composite gave such a scenario 0.0, failing a pass_threshold run that was 100% green."""
    weights = {"cite": (1.0, False), "no-figures": (1.0, True)}
    cells = [
        scored("medium", "pass", "cite", 1.0),
        scored("critical", "pass", "no-figures", 1.0),
        cell("medium", "not_applicable", "cite", "calm-only").model_copy(update={"scenario": "other"}),
        cell("critical", "not_applicable", "no-figures", "other").model_copy(update={"scenario": "other"}),
    ]
    result = score_cells(cells, weights=weights, pass_threshold=0.9)
    assert set(result.composite) == {"s"} and result.composite["s"].composite == 1.0
    assert result.verdict == "PASS" and result.reasons == []


def test_weightless_invariants_give_no_composite() -> None:
    cells = [scored("medium", "pass", "nice", 1.0)]
    assert score_cells(cells, weights={"nice": (0.0, False)}, pass_threshold=0.5).composite == {}


def test_a_chaos_scenario_that_injected_nothing_fails_the_run() -> None:
    from flakeproxy.results import ScenarioCoverage

    idle = ScenarioCoverage(scenario="tool-down", chaos=True, episodes=2, decided=0, applied=0)
    score = score_cells([cell("low", "pass")], coverage=[idle])
    assert score.verdict == "FAIL" and score.reasons == [
        "scenario tool-down injected nothing: no fault changed what the agent received"
    ]
    worked = idle.model_copy(update={"decided": 2, "applied": 2})
    assert score_cells([cell("low", "pass")], coverage=[worked]).verdict == "PASS"
    unknown = idle.model_copy(update={"unattributed": 3})  # a trial: not "injected nothing" beside "unknown"
    assert score_cells([cell("low", "pass")], coverage=[unknown]).reasons == [
        "scenario tool-down: whether its faults reached the agent is unknown (3 request(s) of its episodes could not "
        "be attributed), so it tested nothing it can show"
    ]


def test_a_leak_the_runner_saw_fails_the_run_whatever_the_severity() -> None:
    """A high ERROR cell alone only lowers the score (only critical ones fail the run); one whose verdict is on an
    answer that repeated a secret value its episode sent names the leak and FAILs the run (exit 1)."""
    from flakeproxy.judging.repeated_secrets import EVIDENCE
    from flakeproxy.results import EpisodeVerdict

    unjudged = cell("high", "error", "no-errors", "calm")
    assert score_cells([unjudged, cell("critical", "pass")]).verdict == "PASS"
    seen = EpisodeVerdict(episode="e1", prompt="p", outcome="error", reason="r", evidence={EVIDENCE: 1})
    score = score_cells([unjudged.model_copy(update={"verdicts": [seen]}), cell("critical", "pass")])
    assert (score.verdict, exit_code(score.verdict)) == ("FAIL", 1)
    assert score.reasons == [
        "the agent leaked secrets: its answers repeated 1 secret value(s) their episode sent (a key, a token, a field "
        "named in redact:) in 1 episode(s) of scenario(s) calm (seen by no-errors)"
    ]


def test_inconclusive_is_left_out_of_the_score_and_listed() -> None:
    cells = [cell("high", "pass"), cell("high", "fail", "j"), cell("high", "inconclusive", "k", "tool-down")]
    score = score_cells(cells)
    assert score.resilience == 50.0  # 2 / (2 + 2): the INCONCLUSIVE cell's weight counts on neither side
    assert score.verdict == "PASS" and score.passed  # a non-critical one does not gate
    assert score.inconclusive == ["high invariant k is INCONCLUSIVE in scenario tool-down: r"]
    assert score.counts == {"pass": 1, "fail": 1, "inconclusive": 1}


def test_a_critical_inconclusive_never_passes_and_a_failure_wins() -> None:
    open_only = score_cells([cell("low", "pass"), cell("critical", "inconclusive", "c", "s")])
    assert (open_only.verdict, open_only.passed, open_only.reasons) == ("INCONCLUSIVE", False, [])
    assert open_only.inconclusive == ["critical invariant c (keeps the run from PASS) is INCONCLUSIVE in scenario s: r"]
    assert exit_code(open_only.verdict) == 4
    both = score_cells([cell("critical", "fail", "f"), cell("critical", "inconclusive", "c")])
    assert both.verdict == "FAIL" and exit_code(both.verdict) == 1
    gated = score_cells(
        [cell("low", "pass"), cell("low", "inconclusive", "g")], weights={"g": (1.0, True), "i": (1.0, False)}
    )
    assert gated.verdict == "INCONCLUSIVE"


def test_only_inconclusive_cells_are_not_scored_and_not_passed() -> None:
    score = score_cells([cell("critical", "inconclusive"), cell("high", "not_applicable", "n")])
    assert score.resilience is None and score.verdict == "INCONCLUSIVE"
    assert [exit_code(v) for v in ("PASS", "FAIL", "INCONCLUSIVE", None)] == [0, 1, 4, 1]


def test_ci_is_inconclusive_when_its_contract_is_and_nothing_else_failed() -> None:
    def pillars() -> list[PillarResult]:
        return [
            PillarResult(name="contract", ran=True, score=None, weight=0.5, passed=False),
            PillarResult(name="chaos", ran=True, score=90.0, weight=0.5, passed=True),
        ]

    ci = combine(pillars(), None, False, contract_open=True)
    assert (ci.verdict, ci.passed, ci.reasons) == ("INCONCLUSIVE", False, [])
    low = combine(pillars(), 95.0, False, contract_open=True)  # a missed minimum still fails
    assert low.verdict == "FAIL" and low.reasons == ["overall 90.0 is below the minimum 95"]
    assert combine(pillars(), None, False).verdict == "FAIL"
    alone = [PillarResult(name="contract", ran=True, score=None, weight=0.5, passed=False),
             PillarResult(name="chaos", ran=False, weight=0.5)]  # fmt: skip
    only = combine(alone, None, False, contract_open=True)  # the contract the only pillar, all of it unsettled
    assert (only.verdict, only.overall, only.reasons) == ("INCONCLUSIVE", None, [])
    assert combine(alone, None, False).reasons[0] == "no pillar could be scored"  # a FAIL, not open, is said
