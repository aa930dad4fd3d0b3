"""The resilience score of the behavioral-contracts spec, and the PASS/FAIL gate."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.config.can_fail import why_contract_cannot_fail
from flakeproxy.errors import ConfigError
from flakeproxy.invariants import SEVERITY_WEIGHTS
from flakeproxy.judging.repeated_secrets import leak_reason
from flakeproxy.results import CellResult, Composite, ScenarioCoverage, Score


def composite(
    cells: list[CellResult], weights: dict[str, tuple[float, bool]], threshold: float | None
) -> Composite | None:
    """The invariants-weights-gates spec: sum(weight x score) / sum(weight); any failed gate forces 0.

    None when no weighted invariant applies in the scenario (there is nothing to average, which is not 0).
    """
    judged = [c for c in cells if c.outcome not in ("not_applicable", "inconclusive")]
    if not any(weights[c.invariant][0] > 0 or weights[c.invariant][1] for c in judged):
        return None
    gates = [c.invariant for c in judged if weights[c.invariant][1] and c.score < 1.0]
    total = sum(weights[c.invariant][0] for c in judged)
    value = 0.0 if gates or not total else sum(weights[c.invariant][0] * c.score for c in judged) / total
    value = round(value, 4)
    return Composite(composite=value, passed=threshold is None or value >= threshold, gate_failed=gates)


def score_cells(
    cells: Iterable[CellResult],
    min_resilience: float | None = None,
    weights: dict[str, tuple[float, bool]] | None = None,
    pass_threshold: float | None = None,
    coverage: Iterable[ScenarioCoverage] = (),
) -> Score:
    """score = Σ(passed * weight) / Σ(applicable * weight) * 100, weights critical 3, high 2, medium 1, low 1.

    Not-applicable and INCONCLUSIVE cells are left out (an INCONCLUSIVE cell showed neither a pass nor a
    failure; it is listed in `inconclusive`); errors count as not passed. Any critical cell that failed or could
    not be judged makes the contract FAIL whatever the number; so does a score below min_resilience, and so does
    an answer that repeated a secret value its episode sent, seen by a check that forbids content (a leak the
    runner saw, whatever the check's severity: see judging/repeated_secrets.py). Nothing
    failed but a critical or gate cell INCONCLUSIVE: the verdict is INCONCLUSIVE (exit 4), never PASS.
    An empty matrix, or one where nothing applies, is an error (never a 100% pass). A chaos scenario that
    injected nothing makes the run FAIL: it tested nothing it claims to. Composites are computed only when
    `weights` is given (the caller passes it when weights, gates or pass_threshold are set).
    """
    cells = list(cells)
    counts = Counter(c.outcome for c in cells)
    open_cells = [c for c in cells if c.outcome == "inconclusive"]
    applicable = [c for c in cells if c.outcome not in ("not_applicable", "inconclusive")]
    coverage = list(coverage)
    if not applicable and not open_cells and not any(cov.injected_nothing for cov in coverage):
        raise ConfigError("no cell of the contract applies to any scenario (check `when`); nothing was judged")
    total = sum(SEVERITY_WEIGHTS[c.severity] for c in applicable)
    won = sum(SEVERITY_WEIGHTS[c.severity] for c in applicable if c.outcome == "pass")
    resilience = round(won / total * 100, 2) if total else None
    reasons = [
        f"critical invariant {c.invariant} {'failed' if c.outcome == 'fail' else 'could not be judged'} "
        f"in scenario {c.scenario}: {c.reason}"
        for c in applicable
        if c.severity == "critical" and c.outcome in ("fail", "error")
    ]
    if (leak := leak_reason(cells)) is not None:
        reasons.append(leak)
    for cov in coverage:
        if cov.injected_nothing and cov.unattributed:  # its faults may have acted on requests tied to no episode
            reasons.append(
                f"scenario {cov.scenario}: whether its faults reached the agent is unknown ({cov.unattributed} "
                "request(s) of its episodes could not be attributed), so it tested nothing it can show"
            )
        elif cov.injected_nothing:
            reasons.append(f"scenario {cov.scenario} injected nothing: no fault changed what the agent received")
    if min_resilience is not None and resilience is not None and resilience < min_resilience:
        reasons.append(f"resilience {resilience} is below scoring.min_resilience {min_resilience}")
    composites: dict[str, Composite] = {}
    if weights is not None:
        for scenario in dict.fromkeys(c.scenario for c in cells):
            part = composite([c for c in cells if c.scenario == scenario], weights, pass_threshold)
            if part is None:
                continue
            composites[scenario] = part
            if part.gate_failed:
                reasons.append(f"gate {', '.join(part.gate_failed)} failed in scenario {scenario}: composite 0")
            elif not part.passed:
                reasons.append(f"composite {part.composite} < scoring.pass_threshold {pass_threshold} in {scenario}")
    gates = {i for i, (_, gate) in (weights or {}).items() if gate}
    blocking = [c for c in open_cells if c.severity == "critical" or c.invariant in gates]
    ok = not reasons and not blocking
    return Score(
        resilience=resilience,
        composite=composites,
        passed=ok,
        verdict="PASS" if ok else "FAIL" if reasons else "INCONCLUSIVE",
        reasons=reasons,
        inconclusive=[inconclusive_line(c, c in blocking) for c in open_cells],
        counts=dict(counts),
    )


def inconclusive_line(cell: CellResult, blocking: bool) -> str:
    what = f"{cell.severity} invariant {cell.invariant}" + (" (keeps the run from PASS)" if blocking else "")
    return f"{what} is INCONCLUSIVE in scenario {cell.scenario}: {cell.reason}"


#: the exit code of each verdict: 4 says "nothing failed, but too few replicas to pass" (see cli/main.py)
EXIT_CODES = {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 4}


def exit_code(verdict: str | None) -> int:
    """0 PASS, 4 INCONCLUSIVE, 1 otherwise (FAIL, or no verdict: an incomplete run)."""
    return EXIT_CODES.get(verdict or "FAIL", 1)


def score_contract(config: FlakeproxyConfig, cells: list[CellResult], coverage: list[ScenarioCoverage]) -> Score:
    """The contract's score from its config: composites only when weights, gates or pass_threshold are set; and
    whether anything judged could have failed it."""
    assert config.contract is not None
    invariants, scoring = config.contract.invariants, config.scoring
    weighted = scoring.pass_threshold is not None or any(i.weight != 1.0 or i.gate for i in invariants)
    weights = {i.id: (i.weight, i.gate) for i in invariants} if weighted else None
    score = score_cells(cells, scoring.min_resilience, weights, scoring.pass_threshold, coverage)
    return score.model_copy(update={"cannot_fail": why_contract_cannot_fail(config)})
