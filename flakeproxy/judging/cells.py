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
from flakeproxy.config.warnings import ATTRIBUTION_FIX, attribution_fix
from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.replicas import aggregate_replicas, pass_at_k, pass_hat_k
from flakeproxy.judging.stats import wilson
from flakeproxy.judging.turns import beyond, judge_turns, whole_view
from flakeproxy.judging.verdict import Observation, Verdict
from flakeproxy.planning.plan import prompt_keys_of
from flakeproxy.results import CellResult, Episode, EpisodeVerdict, Outcome

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
        key = self.turn[0] if self.turn else episode.prompt
        found = self.baselines.get((key, episode.replica))
        calm = self.episodes[found] if found and found in self.episodes else None
        if calm is None or self.turn is None or calm.transcript is None:
            return calm.answer if calm is not None else None
        n = self.turn[1]
        if n == 0:
            return whole_view(calm).answer
        return calm.transcript[n - 1].answer if len(calm.transcript) >= n else None


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
    )


def negated(verdict: Verdict) -> Verdict:
    if verdict.outcome == "pass":
        return Verdict("fail", f"negated: {verdict.reason}", verdict.evidence)
    if verdict.outcome == "fail":
        return Verdict("pass", f"negated: {verdict.reason}", verdict.evidence)
    return verdict


def undelivered(invariant: Invariant, episode: Episode) -> Verdict | None:
    """Why a chaos-conditioned check cannot judge this episode: none of the faults its `when` is about reached
    the agent here (and for a context attack, its model). n/a, or ERROR when delivery could not be seen."""
    sections = SECTIONS_FOR.get(invariant.when)
    if sections is None:
        return None
    faults = [f for f in episode.faults(applied=None) if f.section in sections]
    if any(f.counts for f in faults):
        return None
    attacks = [f for f in faults if f.applied and f.context_attack]
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


def _verdict(invariant: Invariant, episode: Episode, ctx: Context) -> Verdict:
    if episode.transcript is not None:  # a conversation: the turns its `turn:` names, each judged as an episode

        def judge(view: Episode, n: int | None) -> Verdict:
            return _verdict(invariant, view, replace(ctx, turn=(episode.prompt, n or 0)))

        return judge_turns(invariant.turn, episode, judge)
    if ctx.turn is None and isinstance(invariant.turn, int) and invariant.turn > 1:  # a one-turn prompt has no turn 2
        return beyond(invariant.turn, 1)
    if (gate := undelivered(invariant, episode)) is not None:
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
    return negated(verdict) if invariant.negate else verdict


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
    return scenario.applies(invariant.when) and episode.prompt in prompt_keys_of(config, invariant)


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
    invariant: Invariant, scenario: Scenario, episodes: list[Episode], fix: str = ATTRIBUTION_FIX["header"]
) -> str | None:
    """Why a chaos-conditioned cell cannot be judged: none of the faults its `when` is about applied (`fix`:
    how the agent's requests become attributable, when some were not)."""
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
    why = sorted({f.not_applied_reason for f in faults if f.not_applied_reason})
    detail = f" (decided {len(faults)} time(s), applied 0{': ' + '; '.join(why) if why else ''})" if faults else ""
    return f"scenario {scenario.name} injected nothing{detail}: check the targets and faults; {invariant.when} not met"


def judge_cell(invariant: Invariant, scenario: Scenario, episodes: list[Episode], ctx: Context) -> CellResult:
    if not scenario.applies(invariant.when):
        return cell_result(invariant, scenario, "not_applicable", f"when: {invariant.when} does not hold here")
    mine = [e for e in episodes if judges(invariant, e, ctx.config)]
    if not mine:
        return cell_result(invariant, scenario, "error", "no episode of this cell ran (the run stopped early?)")
    verdicts = [judge_episode(invariant, e, ctx) for e in mine]
    ids = [e.id for e in mine]
    applied = [f for e in mine for f in e.faults()]
    why = uncovered(invariant, scenario, mine, attribution_fix(ctx.config))
    if why:
        return cell_result(invariant, scenario, "error", why, episodes=ids, verdicts=verdicts, faults_injected=applied)
    return _replicas(invariant, scenario, verdicts, ctx.config, episodes=ids, faults_injected=applied)


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
    if len(replicas) == 1:
        outcome, reason = per[0]
        return cell_result(invariant, scenario, outcome, reason, verdicts=verdicts, score=round(scores[0], 4), **rest)
    scoring = config.scoring
    outcomes: list[Outcome] = [o for o, _ in counted]
    outcome, summary = aggregate_replicas(outcomes, [s for _, s in counted], scoring.replica_aggregation, scoring.k)
    first_bad = next((r for o, r in per if o not in ("pass", "not_applicable")), "-")
    n, c = len(outcomes), outcomes.count("pass")
    interval = wilson(c, n, scoring.confidence)
    return cell_result(
        invariant,
        scenario,
        outcome,
        f"{summary}; first non-pass: {first_bad}",
        verdicts=verdicts,
        score=round(sum(s for _, s in counted) / n, 4),
        replicas=outcomes,
        flaky=len(set(outcomes)) > 1,
        pass_at_k=pass_at_k(n, c, scoring.k),
        pass_hat_k=pass_hat_k(n, c, scoring.k),
        pass_rate=round(c / n, 4),
        pass_rate_low=round(interval.low, 4),
        pass_rate_high=round(interval.high, 4),
        **rest,
    )


def judge_scenario(scenario: Scenario, episodes: list[Episode], ctx: Context) -> list[CellResult]:
    """Every invariant of the contract in one scenario, from that scenario's episodes."""
    assert ctx.config.contract is not None
    mine = [e for e in episodes if e.scenario == scenario.name]
    return [judge_cell(invariant, scenario, mine, ctx) for invariant in ctx.config.contract.invariants]
