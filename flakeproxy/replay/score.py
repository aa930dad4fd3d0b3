"""Judge replayed sessions (pure): the contract's invariants on each replayed answer, then the replay score.

A session is ERROR when a request found no recording under `unmatched: error` (the session no longer
describes the agent: the report names each such request by target and URL), or when the agent errored.
Otherwise every applicable contract invariant judges the answer: any fail fails it, else any error errors
it. Its weight is the sum of the severity weights (3/2/1/1) of those invariants; the score is the
weighted pass rate over the sessions. `expected_failure: true` inverts the outcome of a judged session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from flakeproxy.config import FlakeproxyConfig, Scenario
from flakeproxy.config.replays import ReplayOptions, Session
from flakeproxy.invariants import SEVERITY_WEIGHTS
from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.cells import Context
from flakeproxy.planning.pillars import CALM, judge_item, weighted_rate
from flakeproxy.replay.export import APPLIED_IN_PROCESS
from flakeproxy.results import (
    Episode,
    PillarItem,
    PillarResult,
    ReplayResult,
    ReplaySessionResult,
)


@dataclass(frozen=True)
class Replayed:
    """What the proxy said about one replayed episode."""

    served: int = 0
    unused: int = 0
    unmatched: list[str] = field(default_factory=list)
    inexact: list[str] = field(default_factory=list)  # exchanges served that could not be as the agent first got them


def judge_session(
    config: FlakeproxyConfig,
    session: Session,
    source: str,
    episode: Episode,
    replayed: Replayed,
    options: ReplayOptions,
    scenario: Scenario | None = None,
) -> ReplaySessionResult:
    invariants = config.contract.invariants if config.contract else []
    scenario = scenario or CALM
    # a replay has no calm run of its own: checks that compare with one (amplification, behavior_unchanged with
    # baseline: auto) have nothing to compare with here, and are left out
    applicable = [i for i in invariants if i.judged_in(scenario) and not _compares_with_calm(i)]
    weight = float(sum(SEVERITY_WEIGHTS[i.severity] for i in applicable)) or 1.0
    same = None if session.answer is None else session.answer == episode.answer
    base = ReplaySessionResult(
        session=session.id,
        source=source,
        episode=episode.id,
        outcome="error",
        reason="",
        weight=weight,
        expected_failure=session.expected_failure,
        served=replayed.served,
        unused=replayed.unused,
        unmatched=replayed.unmatched,
        answer_matches_recording=same,
    )
    if replayed.unmatched and options.unmatched == "error":
        first = replayed.unmatched[0]
        more = f" (+{len(replayed.unmatched) - 1} more)" if len(replayed.unmatched) > 1 else ""
        reason = f"unmatched request {first}{more}: the session no longer describes the agent; record it again"
        live = [f for f in episode.faults() if not f.replayed]
        if any(APPLIED_IN_PROCESS in note for note in session.notes):  # recording it again cannot help
            reason = (
                f"unmatched request {first}{more}: the session was recorded under {session.scenario}, whose faults "
                "on the agent's wrapped tools were applied in its process, not on the wire: the replay does not "
                "repeat them, so the agent went on differently; such a session cannot replay as recorded (leave it "
                "out of replays.sources)"
            )
        elif replayed.inexact:  # the replay, not the agent, may have changed them
            reason = (
                f"unmatched request {first}{more}: the replay could not serve {replayed.inexact[0]} as the agent "
                "first got it, so the agent may have acted on a different answer; record the session on the wire "
                "(contract run --record, or proxy --record) instead"
            )
        elif live and scenario is not CALM:  # the layered faults, not the agent, may have changed them
            reason = (
                f"unmatched request {first}{more}: the faults of scenario {scenario.name} applied, so the agent's"
                " next requests differ from the recording (a tool fault changes what it sends the LLM); layer"
                " tool faults with replays.llm: live, or record the session again"
            )
        return base.model_copy(update={"reason": reason})
    if not applicable:
        return base.model_copy(update={"reason": "no contract invariant applies: add a contract: to judge replays"})
    item = judge_item(applicable, scenario, episode, Context(config, {episode.id: episode}), session.id, weight)
    outcome, reason = item.outcome, item.reason
    if session.expected_failure and outcome in ("pass", "fail"):
        outcome = "pass" if outcome == "fail" else "fail"
        reason = (
            f"expected failure still happens: {reason}"
            if outcome == "pass"
            else "expected failure did not happen: every invariant holds; drop expected_failure"
        )
    return base.model_copy(update={"outcome": outcome, "reason": reason, "verdicts": item.verdicts})


def _compares_with_calm(invariant: Invariant) -> bool:
    return invariant.uses_baseline and getattr(invariant, "baseline", "auto") == "auto"


def judging_scenario(config: FlakeproxyConfig, session: Session, layered: Scenario | None) -> Scenario | None:
    """The scenario a replayed session is judged as: the one replays.scenario layers on top, else the one it was
    recorded under (its faults are in the recorded responses), when the config's matrix still has it."""
    if layered is not None or session.scenario is None:
        return layered
    return next((s for s in config.matrix if s.name == session.scenario), None)


def replay_result(sessions: Sequence[ReplaySessionResult], options: ReplayOptions) -> ReplayResult:
    items = [_item(s) for s in sessions]
    score = weighted_rate(items)
    good = sum(1 for s in sessions if s.outcome == "pass")
    summary = f"{good}/{len(sessions)} sessions hold"
    unmatched = sum(len(s.unmatched) for s in sessions)
    if unmatched:
        summary += f"; {unmatched} unmatched request(s)"
    passed = bool(sessions) and all(s.outcome in ("pass", "not_applicable") for s in sessions)
    return ReplayResult(
        score=score,
        passed=passed,
        verdict="PASS" if passed else "FAIL",
        summary=summary,
        options=options.model_dump(mode="json"),
        sessions=list(sessions),
    )


def _item(session: ReplaySessionResult) -> PillarItem:
    return PillarItem(
        episode=session.episode or "",
        label=session.session,
        weight=session.weight,
        outcome=session.outcome,
        reason=session.reason,
        verdicts=session.verdicts,
    )


def replay_pillar(result: ReplayResult, weight: float) -> PillarResult:
    """The ci pillar: the replay score, weight counts in the summary."""
    weights = sum(s.weight for s in result.sessions)
    summary = f"{result.summary} (severity weight {weights:g} over {len(result.sessions)} sessions)"
    return PillarResult(
        name="replay",
        ran=True,
        score=result.score,
        weight=weight,
        passed=result.passed,
        summary=summary,
        items=[_item(s) for s in result.sessions],
    )
