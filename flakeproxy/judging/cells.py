"""Judge: every invariant over the episodes of its scenario, into cells (pure: no agent, no proxy).

A cell (invariant x scenario) aggregates its episodes: over prompts (any fail fails, else any error errors),
then over replicas by scoring.replica_aggregation. What an invariant cannot judge is said: an agent error
makes answer checks ERROR, unattributed traffic makes journal checks ERROR, a chaos-conditioned cell whose
faults never reached the agent is ERROR, and a check with nothing to judge is n/a; never a silent PASS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from flakeproxy.config import FlakeproxyConfig, Scenario
from flakeproxy.config.conversation import turn_count
from flakeproxy.config.default_pricing import effective_pricing
from flakeproxy.config.warnings import ATTRIBUTION_FIX, attribution_fix
from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.adaptive import design_of, replica_state
from flakeproxy.judging.calm_checks import response_path_unread
from flakeproxy.judging.repeated_secrets import judge_repeated_secrets
from flakeproxy.judging.replicas import aggregate_replicas, pass_at_k, pass_hat_k
from flakeproxy.judging.stats import rate_verdict, wilson
from flakeproxy.judging.stats_sequential import CellState
from flakeproxy.judging.turns import beyond, judge_turns, whole_view
from flakeproxy.judging.unreached import undecided
from flakeproxy.judging.verdict import Observation, Verdict
from flakeproxy.planning.plan import prompt_keys_of, prompts_of
from flakeproxy.results import CellResult, Episode, EpisodeVerdict, Outcome
from flakeproxy.wire.coverage import not_the_targets
from flakeproxy.wire.record import FaultRecord

#: which applied faults make a `when` true (context attacks count for any_chaos_active only)
SECTIONS_FOR = {
    "tool_faults_active": ("tool_faults",),
    "llm_faults_active": ("llm_faults",),
    "any_chaos_active": ("tool_faults", "llm_faults", "context_attacks"),
}


@dataclass(frozen=True)
class Context:
    """What judging needs besides the invariant: the config and the episodes run so far."""

    config: FlakeproxyConfig
    episodes: Mapping[str, Episode] = field(default_factory=dict)
    baselines: Mapping[tuple[str, int], str] = field(default_factory=dict)
    #: judging one turn of a conversation: the conversation's prompt key and the turn, 0 for the whole
    #: (baseline: the calm answer to that turn, or the calm conversation's answers joined)
    turn: tuple[str, int] | None = None

    def baseline(self, episode: Episode) -> str | None:
        """The calm answer to the same prompt (for a turn of a conversation: the calm answer to that turn)."""
        calm = self._baseline(episode)
        if calm is None or self.turn is None or calm.transcript is None:
            return calm.answer if calm is not None else None
        n = self.turn[1]
        if n == 0:
            return whole_view(calm).answer
        return calm.transcript[n - 1].answer if len(calm.transcript) >= n else None

    def baseline_journal(self, episode: Episode) -> list[dict[str, Any]] | None:
        found = self._baseline(episode)
        return found.journal if found else None

    def _baseline(self, episode: Episode) -> Episode | None:
        """The calm episode of the same prompt (or conversation) and replica, if the plan has one and it ran."""
        key = self.turn[0] if self.turn else episode.prompt
        found = self.baselines.get((key, episode.replica))
        return self.episodes[found] if found and found in self.episodes else None


def observe(episode: Episode, ctx: Context) -> Observation:
    return Observation(
        prompt=episode.prompt,
        text=episode.answer,
        latency_ms=episode.latency_ms,
        error=episode.error,
        journal=episode.journal,
        baseline=ctx.baseline(episode),
        workspace=ctx.config.run.workspace,
        services=dict(ctx.config.services),
        judge=ctx.config.judge,
        scenario=episode.scenario,
        agent_spans=episode.agent_spans,
        baseline_journal=ctx.baseline_journal(episode),
        pricing=effective_pricing(ctx.config.pricing),
        unread=response_path_unread(ctx.config, ctx.episodes.values()) if episode.unread is not None else None,
    )


def negated(verdict: Verdict) -> Verdict:
    if verdict.outcome == "pass":
        return Verdict("fail", f"negated: {verdict.reason}", verdict.evidence)
    if verdict.outcome == "fail":
        return Verdict("pass", f"negated: {verdict.reason}", verdict.evidence)
    return verdict


def undelivered(invariant: Invariant, episode: Episode, config: FlakeproxyConfig | None = None) -> Verdict | None:
    """Why a chaos-conditioned check cannot judge this episode: none of the faults its `when` is about reached
    the agent here (and for a context attack, its model). n/a, or ERROR when delivery could not be seen. An
    attack whose payload is in the answer reached the answer, whatever the journal shows: judged (a trial's agent
    answered with the canary, its LLM calls past the proxy, and the check was n/a)."""
    sections = SECTIONS_FOR.get(invariant.when)
    if sections is None:
        return None
    faults = [f for f in episode.faults(applied=None) if f.section in sections]
    if any(f.counts for f in faults):
        return None
    attacks = [f for f in faults if f.applied and f.context_attack]
    if config is not None and any(_in_answer(config, f, episode) for f in attacks):
        return None
    if any(f.reached_model is None for f in attacks):
        return Verdict(
            "error",
            f"the attack reached the agent, but whether it reached the model is unknown: {attacks[0].model_evidence}",
        )
    if attacks:
        return Verdict(
            "not_applicable",
            f"the attack reached the agent but not its model: the agent did not pass the tool result to its model "
            f"({attacks[0].label}: {attacks[0].model_evidence})",
        )
    return Verdict("not_applicable", f"no fault of {invariant.when} reached the agent in this episode")


def _in_answer(config: FlakeproxyConfig, record: FaultRecord, episode: Episode) -> bool:
    """Whether the attack's marker (its canary) is in what the agent answered."""
    scenario = next((s for s in config.matrix if s.name == record.scenario), None)
    if scenario is None or record.index >= len(scenario.context_attacks):
        return False
    marker = scenario.context_attacks[record.index].marker()
    said = [episode.answer, *(t.answer for t in episode.transcript or [])]
    return marker is not None and marker != "" and any(marker in text for text in said if text)


def _verdict(invariant: Invariant, episode: Episode, ctx: Context) -> Verdict:
    if episode.transcript is not None:  # a conversation: the turns its `turn:` names, each judged as an episode

        def judge(view: Episode, n: int | None) -> Verdict:
            return _verdict(invariant, view, replace(ctx, turn=(episode.prompt, n or 0)))

        return judge_turns(invariant.turn, episode, judge)
    if ctx.turn is None and isinstance(invariant.turn, int) and invariant.turn > 1:  # a one-turn prompt has no turn 2
        return beyond(invariant.turn, 1)
    if (gate := undelivered(invariant, episode, ctx.config)) is not None:
        return gate
    if episode.error is not None and invariant.needs_answer:
        return Verdict("error", f"agent error: {episode.error}")
    if invariant.reads_journal and episode.unattributed:
        return Verdict(
            "error",
            f"{episode.unattributed} request(s) seen during this episode could not be attributed to it; "
            f"{attribution_fix(ctx.config)}",
        )
    verdict = invariant.evaluate(observe(episode, ctx))
    verdict = negated(verdict) if invariant.negate else verdict
    # a pass, or an n/a that rests on what the journal lacks ("the agent did not retry"), claims the whole of
    # what the agent called: not for an episode whose journal may not hold it all
    unseen = invariant.reads_journal and verdict.outcome in ("pass", "not_applicable")
    if unseen and episode.late_unattributed:
        return Verdict(
            "error",
            f"{episode.late_unattributed} request(s) named this episode after it had ended (results.json "
            f"unattributed_journal, named_episode): its journal is not all it called, so its traffic cannot "
            f"{'pass' if verdict.outcome == 'pass' else 'be n/a'} (seen: {verdict.reason})",
        )
    if unseen and episode.lost:
        return Verdict(
            "error",
            f"agent error: {episode.error}; what it called after the episode ended was not seen, so its traffic "
            f"cannot {'pass' if verdict.outcome == 'pass' else 'be n/a'} (seen: {verdict.reason})",
        )
    return judge_repeated_secrets(invariant, verdict, episode.scrubbed)


def judge_episode(invariant: Invariant, episode: Episode, ctx: Context) -> EpisodeVerdict:
    """One invariant on one episode (a state check judged right after its episode keeps that verdict)."""
    if invariant.id in episode.state_verdicts:
        return episode.state_verdicts[invariant.id]
    verdict = _verdict(invariant, episode, ctx)
    return EpisodeVerdict(
        episode=episode.id,
        prompt=episode.prompt,
        replica=episode.replica,
        outcome=verdict.outcome,
        reason=verdict.reason,
        score=verdict.value,
        evidence=verdict.evidence,
    )


def judges(invariant: Invariant, episode: Episode, config: FlakeproxyConfig) -> bool:
    """Whether this invariant's cell includes this episode."""
    if episode.purpose != "matrix" or episode.scenario is None:
        return False
    if episode.invariant is not None and episode.invariant != invariant.id:
        return False
    scenario = config.scenario(episode.scenario)
    return invariant.judged_in(scenario) and episode.prompt in prompt_keys_of(config, invariant)


def aggregate(verdicts: list[EpisodeVerdict]) -> tuple[Outcome, str]:
    """Over prompts: any fail fails, else any error errors, else pass; n/a verdicts are left out."""
    judged = [v for v in verdicts if v.outcome != "not_applicable"]
    if not judged:
        return "not_applicable", verdicts[0].reason if verdicts else "no episode to judge"
    for outcome in ("fail", "error"):
        bad = [v for v in judged if v.outcome == outcome]
        if bad:
            more = f" (and {len(bad) - 1} more episode{'s' if len(bad) > 2 else ''})" if len(bad) > 1 else ""
            return bad[0].outcome, f"{bad[0].reason}{more}"
    return "pass", judged[0].reason if len(judged) == 1 else f"all {len(judged)} episodes pass"


def cell_result(invariant: Invariant, scenario: Scenario, outcome: Outcome, reason: str, **rest: Any) -> CellResult:
    return CellResult(
        invariant=invariant.id,
        type=str(getattr(invariant, "type", "")),
        scenario=scenario.name,
        severity=invariant.severity,
        when=invariant.when,
        outcome=outcome,
        reason=reason,
        **rest,
    )


def uncovered(
    invariant: Invariant,
    scenario: Scenario,
    episodes: list[Episode],
    fix: str = ATTRIBUTION_FIX["header"],
    config: FlakeproxyConfig | None = None,
) -> str | None:
    """Why a chaos-conditioned cell cannot be judged: none of the faults its `when` is about applied (`fix`:
    how the agent's requests become attributable, when some were not; `config`: to tell whether the agent
    called what the faults aim at at all)."""
    sections = SECTIONS_FOR.get(invariant.when)
    if sections is None or not episodes:
        return None
    faults = [f for e in episodes for f in e.faults(applied=None) if f.section in sections]
    if any(f.applied for f in faults):
        return None
    loose = sum(e.unattributed for e in episodes)
    if loose:
        return (
            f"{loose} request(s) of these episodes could not be attributed to them, so whether the faults of "
            f"{scenario.name} reached them is unknown; {fix}"
        )
    cause = undecided(config, scenario, episodes, sections) if config is not None and not faults else None
    if cause is not None:
        return f"scenario {scenario.name} injected nothing: {cause.detail()}; {invariant.when} not met"
    why = sorted({f.not_applied_reason for f in faults if f.not_applied_reason})
    detail = f" (decided {len(faults)} time(s), applied 0{': ' + '; '.join(why) if why else ''})" if faults else ""
    fix = "" if why and all(not_the_targets(w) for w in why) else ": check the targets and faults"  # not the config
    return f"scenario {scenario.name} injected nothing{detail}{fix}; {invariant.when} not met"


def judge_cell(invariant: Invariant, scenario: Scenario, episodes: list[Episode], ctx: Context) -> CellResult:
    if not scenario.applies(invariant.when):
        return cell_result(invariant, scenario, "not_applicable", f"when: {invariant.when} does not hold here")
    if not invariant.names(scenario.name):
        return cell_result(
            invariant, scenario, "not_applicable", f"not one of its scenarios ({', '.join(invariant.scenarios or [])})"
        )
    mine = [e for e in episodes if judges(invariant, e, ctx.config)]
    if not mine and not any(scenario.reaches(turn_count(p)) for p in prompts_of(ctx.config, invariant)):
        return cell_result(
            invariant, scenario, "not_applicable",
            f"its faults act from turn {scenario.first_turn()} on, and none of this check's prompts has that many "
            "turns: nothing of this scenario could reach them, so none ran here",
        )  # fmt: skip
    if not mine:
        return cell_result(invariant, scenario, "error", "no episode of this cell ran (the run stopped early?)")
    verdicts = [judge_episode(invariant, e, ctx) for e in mine]
    ids = [e.id for e in mine]
    applied = [f for e in mine for f in e.faults()]
    why = uncovered(invariant, scenario, mine, attribution_fix(ctx.config), ctx.config)
    if why:
        return cell_result(invariant, scenario, "error", why, episodes=ids, verdicts=verdicts, faults_injected=applied)
    judged = _replicas(invariant, scenario, verdicts, ctx.config, episodes=ids, faults_injected=applied)
    if judged.outcome == "pass" and scenario.any_chaos_active and not applied:
        # what passed met none of the scenario's faults: a calm run's pass under its name (trials read the grid,
        # and the resilience score counted it, as a pass under the fault); a failure seen stands
        reason = (
            f"no fault of {scenario.name} reached these episodes (it injected nothing here), so a pass would be a "
            f"calm run's, not one under its faults; {judged.reason}"
        )
        return judged.model_copy(update={"outcome": "not_applicable", "reason": reason})
    return judged


def _replicas(
    invariant: Invariant, scenario: Scenario, verdicts: list[EpisodeVerdict], config: FlakeproxyConfig, **rest: Any
) -> CellResult:
    replicas = sorted({v.replica for v in verdicts})
    per = [aggregate([v for v in verdicts if v.replica == r]) for r in replicas]
    judged = [v for v in verdicts if v.outcome != "not_applicable"]
    scores = [
        sum(v.score for v in judged if v.replica == r) / max(1, len([v for v in judged if v.replica == r]))
        for r in replicas
    ]
    counted = [(o, s) for (o, _), s in zip(per, scores, strict=True) if o != "not_applicable"]
    if not counted:
        return cell_result(invariant, scenario, "not_applicable", per[0][1], verdicts=verdicts, **rest)
    scoring = config.scoring
    if len(replicas) == 1 and scoring.replica_aggregation != "rate" and config.run.adaptive is None:
        outcome, reason = per[0]
        return cell_result(invariant, scenario, outcome, reason, verdicts=verdicts, score=round(scores[0], 4), **rest)
    outcomes: list[Outcome] = [o for o, _ in counted]
    outcome, summary, stats = replica_verdict(outcomes, [s for _, s in counted], config)
    return cell_result(
        invariant,
        scenario,
        outcome,
        summary + non_passes(verdicts),  # every episode passed: there is no first non-pass to name
        verdicts=verdicts,
        score=round(sum(s for _, s in counted) / len(outcomes), 4),
        replicas=outcomes,
        flaky=len(set(outcomes)) > 1,
        **stats,
        **rest,
    )


def non_passes(verdicts: list[EpisodeVerdict]) -> str:
    """'; N of M episodes failed; first: REASON' over every replica's episodes (n/a ones left out), the first a
    failure if any failed (else an error), in replica order; '' when none failed or errored."""
    judged = sorted((v for v in verdicts if v.outcome != "not_applicable"), key=lambda v: v.replica)
    failed, errored = ([v for v in judged if v.outcome == o] for o in ("fail", "error"))
    if not failed and not errored:
        return ""
    of = f"of {len(judged)} {'judged ' if len(judged) < len(verdicts) else ''}episodes"
    if failed and errored:
        count = f"{len(failed)} {of} failed and {len(errored)} could not be judged"
    else:
        count = f"{len(failed)} {of} failed" if failed else f"{len(errored)} {of} could not be judged"
    unjudged = len(verdicts) - len(judged)
    return f"; {count}{f' ({unjudged} more n/a)' if unjudged else ''}; first: {(failed or errored)[0].reason}"


def replica_verdict(
    outcomes: list[Outcome], scores: list[float], config: FlakeproxyConfig
) -> tuple[Outcome, str, dict[str, Any]]:
    """The cell's outcome over its replicas by scoring.replica_aggregation, and its pass-rate fields: the Wilson
    interval, or under the rate rule the exact one (errors count as not passed). With adaptive replicas the
    rate rule's verdict is the sequential rule's (see adaptive_verdict)."""
    scoring, n, c = config.scoring, len(outcomes), outcomes.count("pass")
    extra: dict[str, Any] = {}
    if (design := design_of(config)) is not None:
        state = replica_state(outcomes, design)
        extra["settled_at"] = state.replicas if state.settled else None
    if scoring.replica_aggregation == "rate":
        assert scoring.min_pass_rate is not None  # the config's validator sees to it
        rated = rate_verdict(c, n, scoring.min_pass_rate, scoring.confidence)
        found, summary = (rated.outcome, rated.reason) if design is None else adaptive_verdict(state)
        # a FAIL shown only by replicas that could not be judged is ERROR, as under the other rules
        outcome: Outcome = "error" if found == "fail" and "fail" not in outcomes else found
        summary, interval = f"{summary} (rate)", rated.interval
        if "pass" not in outcomes and "fail" not in outcomes:  # nothing judged: an interval would read as evidence
            summary = f"none of its {n} replicas could be judged, so it has no pass rate to state (rate)"
    else:
        outcome, summary = aggregate_replicas(outcomes, scores, scoring.replica_aggregation, scoring.k)
        interval = wilson(c, n, scoring.confidence)
    return (
        outcome,
        summary,
        {
            "pass_at_k": pass_at_k(n, c, scoring.k),
            "pass_hat_k": pass_hat_k(n, c, scoring.k),
            "pass_rate": round(c / n, 4),
            "pass_rate_low": round(interval.low, 4),
            "pass_rate_high": round(interval.high, 4),
            "pass_rate_interval": interval.method,
            "pass_rate_confidence": interval.confidence,
            **extra,
        },
    )


def adaptive_verdict(state: CellState) -> tuple[Outcome, str]:
    """The rate rule under adaptive replicas: the sequential rule's verdict; a cell still open at the end (its
    scenario reached max with replicas that were n/a, or the run stopped) is INCONCLUSIVE."""
    if state.outcome is not None:
        return state.outcome, state.reason
    return "inconclusive", f"{state.reason}, but no more replicas ran"


def judge_scenario(scenario: Scenario, episodes: list[Episode], ctx: Context) -> list[CellResult]:
    """Every invariant of the contract in one scenario, from that scenario's episodes."""
    assert ctx.config.contract is not None
    mine = [e for e in episodes if e.scenario == scenario.name]
    return [judge_cell(invariant, scenario, mine, ctx) for invariant in ctx.config.contract.invariants]
