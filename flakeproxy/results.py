"""Results of a contract run: versioned; every episode (one agent invocation) with its answer, journal and the
faults that really applied, and every cell (invariant x scenario) with its verdicts over those episodes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from flakeproxy.results_spend import ScenarioSpend, Spend
from flakeproxy.telemetry.spans import AgentSpan
from flakeproxy.wire.record import FaultRecord, read_fault

SCHEMA_VERSION = "4"  # 4: the inconclusive outcome, spend, conversations (optional fields: 3 still reads)
#: inconclusive: only a cell judged by the rate rule (replica_aggregation: rate) when its interval straddles
#: min_pass_rate; never an episode's verdict
Outcome = Literal["pass", "fail", "error", "not_applicable", "inconclusive"]


class Model(BaseModel):
    """Every results model. defer_build: its validator is built on first use, once for the whole tree, not at import
    for every class (~40 ms of each run's start; as flakeproxy.config.base.StrictModel, issue 23)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class EpisodeVerdict(Model):
    """What one invariant says about one episode."""

    episode: str
    prompt: str
    replica: int = 0
    outcome: Outcome
    reason: str
    score: float = 0.0
    evidence: dict[str, Any] = Field(default_factory=dict)


def episode_id(number: int) -> str:
    """The id of the episode at this place (1-based) of its run's plan: e1, e2, ..."""
    return f"e{number}"


def episode_number(id_: str) -> int:
    """An episode's place in its plan, read back from its id (episode_id's inverse)."""
    if not id_.startswith("e") or not id_[1:].isdigit():
        raise ValueError(f"episode id {id_!r} is not e<number>")
    return int(id_[1:])


def shift_episode_id(id_: str, by: int) -> str:
    """The id of the same episode in a plan that starts `by` episodes later (ci runs pillars in one plan)."""
    return episode_id(episode_number(id_) + by)


class TurnRecord(Model):
    """One turn of a conversation as the agent answered it."""

    turn: int = Field(description="1 = the first.")
    prompt: str
    answer: str | None = None
    error: str | None = Field(None, description="Why the agent gave no answer to this turn.")
    latency_ms: float = 0.0
    sent: bool = Field(
        True,
        description="False: not sent, because an earlier turn got no reply (timed out, the agent hung up): the "
        "conversation stopped there; error says which turn and why. Checks on it are ERROR.",
    )


class UnreadAnswer(Model):
    """The agent answered JSON, but agent.response_path found nothing in it: where the path stopped and what the
    body held there. A wrong response_path reads like this in every answer, which tells it from an agent that
    answered in another shape (flakeproxy.judging.calm_checks)."""

    at: str = Field(description="The part of response_path that was found: $ (the body) or e.g. $.data.")
    holds: Literal["object", "array", "string", "number", "boolean", "null"]
    keys: list[str] = Field(default_factory=list, description="Its keys, when it is an object (the first 20).")


class Episode(Model):
    """One invocation of the agent, started from a reset: (scenario, prompt, replica). A conversation is one
    episode too: its turns run in order after one reset, and answer, error and latency are the last turn's answer
    and error and the whole conversation's latency (each turn's are in transcript)."""

    id: str = Field(description="e1, e2, ... in plan order; cells refer to episodes by it.")
    scenario: str | None = Field(description="None for a calm run outside the matrix (a baseline).")
    prompt: str
    prompt_index: int
    replica: int = 0
    purpose: Literal["matrix", "baseline", "stateful_check", "mutation", "chaos", "replay"] = "matrix"
    mutation: str | None = Field(None, description="The mutation's id (mutation pillar), its text is the prompt.")
    invariant: str | None = Field(None, description="run.isolation: cell: the one invariant this episode is for.")
    label: str = Field(description="Stable across runs; seeds the fault decisions of this episode.")
    turns: list[str] | None = Field(
        None, description="A conversation's user turns (prompt is then its id, or its turns joined); None: one turn."
    )
    transcript: list[TurnRecord] | None = Field(None, description="A conversation's turns as they were answered.")
    cell_id: str | None = Field(None, description="The proxy's id for this episode (its control API's episode id).")
    answer: str | None = None
    latency_ms: float = 0.0
    error: str | None = Field(None, description="Why the agent gave no answer (an agent error, not a failure).")
    lost: bool = Field(
        False,
        description="No reply came back at all (it timed out, the agent hung up or exited): what it called after the "
        "episode ended was not seen, so no traffic check can pass it.",
    )
    unread: UnreadAnswer | None = Field(
        None, description="The agent answered JSON that agent.response_path found nothing in (error says so too)."
    )
    journal: list[dict[str, Any]] = Field(default_factory=list)
    unattributed: int = Field(0, description="Requests seen while this episode ran that could not be tied to it.")
    scrubbed: int = Field(
        0,
        description="Secret values the episode sent (a key, a token, a field named in redact:) that its answers or "
        "errors repeated: scrubbed before any check read them, so a check that forbids content cannot pass them.",
    )
    unsettled: int = Field(
        0, description="Exchanges still open when the episode ended, after waiting 2 s for them to reach the agent."
    )
    late_requests: int = Field(
        0,
        description="Requests its agent began after it gave no reply (a lost episode), kept in this episode: the "
        "runner waits for such an agent to stop calling before it closes the episode (attribution none or slots).",
    )
    late_unattributed: int = Field(
        0,
        description="Requests that named this episode (its header, baggage or trace) after it had ended: no other "
        "episode's, and outside its journal (results.json unattributed_journal, named_episode); its traffic checks "
        "cannot PASS once the runner has read them.",
    )
    still_calling: bool = Field(
        False,
        description="A lost episode's agent was still calling when that wait ran out (as long again as its "
        "timeout, 5-60 s): what it sent later may be tied to the next episode.",
    )
    traceparent: str | None = Field(
        None, description="The W3C traceparent the runner sent with the prompt: its trace id finds the episode's trace."
    )
    agent_spans: list[AgentSpan] = Field(
        default_factory=list, description="The agent's own spans of this episode (proxy.otlp), redacted."
    )
    spend: Spend | None = Field(None, description="Its LLM calls, tool calls, tokens and cost (issue 25).")
    state_verdicts: dict[str, EpisodeVerdict] = Field(
        default_factory=dict, description="Checks of workspace or services, judged right after the episode."
    )

    @field_validator("journal")
    @classmethod
    def _fault_records(cls, journal: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every entry's fault is a whole FaultRecord (one that does not say whether it applied is refused)."""
        for entry in journal:
            read_fault(entry.get("fault"))
        return journal

    @property
    def number(self) -> int:
        """Its place in the plan (ids are e<number>): episodes sort by it, shards split by it."""
        return episode_number(self.id)

    def faults(self, applied: bool | None = True) -> list[FaultRecord]:
        """The fault records of this episode's requests: applied ones (default), not applied, or all (None)."""
        records = (read_fault(entry.get("fault")) for entry in self.journal)
        return [r for r in records if r is not None and (applied is None or r.applied == applied)]


class CellResult(Model):
    invariant: str
    type: str
    scenario: str
    severity: str
    when: str
    outcome: Outcome
    reason: str
    episodes: list[str] = Field(default_factory=list, description="The ids of the episodes this cell judged.")
    verdicts: list[EpisodeVerdict] = Field(default_factory=list)
    faults_injected: list[FaultRecord] = Field(
        default_factory=list, description="Faults that changed what the agent received in these episodes."
    )
    score: float = Field(0.0, description="In [0, 1]: the mean of its verdicts' scores (an error scores 0).")
    replicas: list[Outcome] = Field(default_factory=list, description="Each replica's outcome (run.replicas > 1).")
    flaky: bool = False
    pass_at_k: float | None = None
    pass_hat_k: float | None = None
    pass_rate: float | None = Field(
        None, description="Replicas that passed / replicas judged (errors count as not passed), with replicas."
    )
    pass_rate_low: float | None = Field(
        None, description="The interval of pass_rate at scoring.confidence (pass_rate_interval): its lower bound."
    )
    pass_rate_high: float | None = Field(None, description="... and its upper bound.")
    pass_rate_interval: Literal["wilson", "clopper_pearson"] | None = Field(
        None, description="The interval method: wilson, or clopper_pearson (exact) when the rate rule judged it."
    )
    pass_rate_confidence: float | None = Field(None, description="The interval's confidence (scoring.confidence).")
    settled_at: int | None = Field(
        None,
        description="Adaptive replicas: the judged replicas at whose look the verdict settled (more may have run "
        "for other cells of its scenario); None when fixed, or still open at the end.",
    )


class FaultCoverage(Model):
    """One fault of a scenario: how often it was decided, how often it changed what the agent received, and
    for a context attack on a tool's answer, how often its payload reached the agent's model."""

    section: str
    index: int
    kind: str
    decided: int = 0
    applied: int = 0
    reached_model: int | None = Field(
        None, description="Context attacks on a tool's answer: applied ones whose payload reached the model."
    )
    not_applied_reasons: list[str] = Field(default_factory=list)
    not_delivered_reasons: list[str] = Field(
        default_factory=list, description="Why an applied attack did not reach the model (or could not be seen)."
    )
    applied_turns: dict[int, int] = Field(
        default_factory=dict,
        description="Conversations: how often it applied on each turn (turn -> count); empty for one-turn prompts.",
    )


class ScenarioCoverage(Model):
    scenario: str
    chaos: bool = Field(description="The scenario declares faults or attacks.")
    episodes: int = 0
    decided: int = 0
    applied: int = 0
    reached_model: int | None = Field(
        None, description="Applied context attacks on tool answers whose payload reached the model (None: none)."
    )
    unattributed: int = Field(0, description="Requests during this scenario that no episode could be tied to.")
    faults: list[FaultCoverage] = Field(default_factory=list)

    @property
    def injected_nothing(self) -> bool:
        """A chaos scenario none of whose faults changed anything the agent received (counting the requests
        that could not be attributed to an episode, too)."""
        return self.chaos and self.episodes > 0 and self.applied == 0


class Composite(Model):
    composite: float
    passed: bool
    gate_failed: list[str] = Field(default_factory=list)


class Score(Model):
    resilience: float | None = Field(description="The spec's severity-weighted pass rate, 0-100.")
    composite: dict[str, Composite] = Field(
        default_factory=dict,
        description="Per scenario: sum(weight x score) / sum(weight); a failed gate -> 0. Only when weights, "
        "gates or scoring.pass_threshold are set; a scenario where no weighted invariant applies has none.",
    )
    passed: bool
    verdict: Literal["PASS", "FAIL", "INCONCLUSIVE"] = Field(
        description="INCONCLUSIVE: nothing failed, but a critical (or gate) cell is INCONCLUSIVE (exit 4)."
    )
    reasons: list[str] = Field(default_factory=list, description="Why it failed.")
    inconclusive: list[str] = Field(
        default_factory=list,
        description="The INCONCLUSIVE cells, one line each (left out of the score like n/a; a critical one "
        "or a gate keeps the run from PASS).",
    )
    counts: dict[str, int] = Field(default_factory=dict)
    cannot_fail: str | None = Field(
        None, description="Set when nothing judged could make this run FAIL (no critical invariant, no threshold): why."
    )


class PillarItem(Model):
    """One judged answer of the mutation or chaos pillar: every top-level invariant on one episode."""

    episode: str
    label: str = Field(description="The mutation type, or the golden prompt's index.")
    weight: float = 1.0
    outcome: Outcome
    reason: str
    verdicts: dict[str, EpisodeVerdict] = Field(default_factory=dict, description="invariant id -> verdict")


class PillarResult(Model):
    name: Literal["mutation", "chaos", "contract", "replay"]
    ran: bool
    score: float | None = Field(None, description="0-100; None when it did not run or could not be judged.")
    weight: float = Field(description="scoring.weights for this pillar.")
    share: float = Field(0.0, description="Its weight in the overall after absent pillars' were redistributed.")
    passed: bool | None = None
    summary: str = ""
    skipped: dict[str, str] = Field(default_factory=dict, description="What did not run in it, and why.")
    by_type: dict[str, float] = Field(default_factory=dict, description="mutation: robustness per type, 0-100.")
    items: list[PillarItem] = Field(default_factory=list)


class ReplaySessionResult(Model):
    """One replayed session: served from its recording, judged by its contract's invariants."""

    session: str
    source: str = Field(description="The session file, or 'config' for one written inline.")
    episode: str | None = None
    outcome: Outcome
    reason: str
    weight: float = Field(description="The severity weights (3/2/1/1) of the invariants that judged it.")
    expected_failure: bool = False
    served: int = Field(0, description="Requests answered from the recording.")
    unused: int = Field(0, description="Recorded exchanges and tool responses no request asked for.")
    unmatched: list[str] = Field(default_factory=list, description="Requests no recording matched: target and URL.")
    answer_matches_recording: bool | None = Field(None, description="None: the session has no recorded answer.")
    verdicts: dict[str, EpisodeVerdict] = Field(default_factory=dict)


class ReplayResult(Model):
    score: float | None = Field(None, description="Weighted pass rate over the sessions, 0-100.")
    passed: bool = False
    verdict: Literal["PASS", "FAIL"] = "FAIL"
    summary: str = ""
    options: dict[str, Any] = Field(default_factory=dict, description="match, unmatched, llm, speed.")
    sessions: list[ReplaySessionResult] = Field(default_factory=list)


class CiResult(Model):
    pillars: list[PillarResult] = Field(default_factory=list)
    overall: float | None = Field(None, description="sum of share x score over the pillars that ran, 0-100.")
    redistribution: str | None = Field(None, description="How absent pillars' weights were spread, in words.")
    min_overall: float | None = None
    passed: bool = False
    verdict: Literal["PASS", "FAIL", "INCONCLUSIVE"] = Field(
        "FAIL", description="INCONCLUSIVE: the contract was INCONCLUSIVE and nothing else failed (exit 4)."
    )
    reasons: list[str] = Field(default_factory=list)
    cannot_fail: str | None = Field(None, description="Set when nothing judged could make ci FAIL: why.")


class ShardInfo(Model):
    index: int = Field(description="1-based.")
    count: int
    episodes: list[str] = Field(default_factory=list, description="The episode ids this shard was to run.")


class RunResult(Model):
    schema_version: str = SCHEMA_VERSION
    flakeproxy_version: str
    versions: dict[str, str]
    config_path: str
    config_sha256: str
    contract: str | None
    seed: int
    isolation: Literal["episode", "cell"] = "episode"
    started_at: str
    finished_at: str | None = None
    complete: bool = False
    interrupted_by: str | None = None
    warnings: list[str] = Field(default_factory=list)
    scenarios: list[str] = Field(default_factory=list)
    invariants: list[str] = Field(default_factory=list)
    agent_invocations: int = Field(
        0, description="How many times the agent was invoked (each one paid; a conversation: once per turn)."
    )
    unattributed_requests: int = Field(0, description="Proxied requests no episode could be tied to.")
    unattributed_journal: list[dict[str, Any]] = Field(
        default_factory=list, description="Their journal entries (episode null; episode_candidates: the open episodes)."
    )
    cut_short_journal: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The journal entries of episodes the run stopped before they ended (a budget stop, Ctrl-C, a "
        "crash): in no episode and no scenario's row, counted in spend_total (a trial's budget stop at concurrency "
        "4 left 3 calls of cancelled episodes out of what the run spent).",
    )
    score: Score | None = None
    coverage: list[ScenarioCoverage] = Field(default_factory=list)
    ci: CiResult | None = Field(None, description="flakeproxy ci: every pillar and the overall score.")
    replay: ReplayResult | None = Field(None, description="Replayed sessions (replay run, and ci's replay pillar).")
    shard: ShardInfo | None = Field(
        None, description="A shard's partial run (episodes only; `flakeproxy merge` judges the whole)."
    )
    spend: list[ScenarioSpend] = Field(
        default_factory=list, description="Per scenario: what its episodes spent, and its amplification over calm."
    )
    spend_total: Spend | None = Field(
        None,
        description="Over every episode of the run, calm baselines and the stateful check too, and the requests no "
        "episode could be tied to: what run.budget counts (the scenario rows count the matrix's episodes only).",
    )
    spend_unattributed: Spend | None = Field(
        None,
        description="What the requests no episode could be tied to (unattributed_journal) spent: in spend_total, "
        "in no scenario's row (which scenario made them cannot be told). Null when they made no LLM or tool call.",
    )
    pricing_as_of: str | None = Field(None, description="The date of the prices the costs were computed with.")
    budget_crossed: str | None = Field(None, description="run.budget: which budget stopped the run, and at what.")
    cells: list[CellResult] = Field(default_factory=list)
    episodes: list[Episode] = Field(default_factory=list)

    def episode(self, episode_id: str) -> Episode:
        for episode in self.episodes:
            if episode.id == episode_id:
                return episode
        raise KeyError(episode_id)

    def cell(self, invariant: str, scenario: str) -> CellResult:
        for cell in self.cells:
            if cell.invariant == invariant and cell.scenario == scenario:
                return cell
        raise KeyError((invariant, scenario))
