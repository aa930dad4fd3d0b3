"""The episode as the runner's span: the root of the trace the runner sent the agent (its `traceparent` names this
span), from the prompt to the answer, with every verdict on it as a `gen_ai.evaluation.result` event (name,
score value and label, explanation), the GenAI conventions' event for evaluations, parented to the operation
they judge (here: the agent's invocation)."""

from __future__ import annotations

from collections.abc import Iterable

from flakeproxy.results import CellResult, Episode, EpisodeVerdict
from flakeproxy.telemetry.out import EventSpec, SpanSpec, clean, nanos

EVALUATION_EVENT = "gen_ai.evaluation.result"
MAX_EXPLANATION = 2000


def evaluation(cell: CellResult, verdict: EpisodeVerdict, time_ns: int) -> EventSpec:
    attributes = {
        "gen_ai.evaluation.name": cell.invariant,
        "gen_ai.evaluation.score.value": float(verdict.score),
        "gen_ai.evaluation.score.label": verdict.outcome,
        "gen_ai.evaluation.explanation": verdict.reason[:MAX_EXPLANATION],
        "error.type": "cannot_judge" if verdict.outcome == "error" else None,
        "flakeproxy.invariant.type": cell.type,
        "flakeproxy.invariant.severity": cell.severity,
        "flakeproxy.scenario": cell.scenario,
    }
    return EventSpec(name=EVALUATION_EVENT, time_ns=time_ns, attributes=clean(attributes))


def evaluations(episode: Episode, cells: Iterable[CellResult], time_ns: int) -> list[EventSpec]:
    """One event per verdict any cell gave this episode."""
    return [evaluation(c, v, time_ns) for c in cells for v in c.verdicts if v.episode == episode.id]


def episode_span(
    episode: Episode, root: tuple[str, str], started_at: float, ended_at: float, events: list[EventSpec]
) -> SpanSpec:
    """The span whose id is `root` (trace id, span id): the agent's invocation by the runner."""
    applied = episode.faults()
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "flakeproxy.episode.id": episode.id,
        "flakeproxy.scenario": episode.scenario,
        "flakeproxy.purpose": episode.purpose,
        "flakeproxy.prompt.index": episode.prompt_index,
        "flakeproxy.replica": episode.replica,
        "flakeproxy.faults.applied": len(applied),
        "flakeproxy.faults": [f.label for f in applied],
        "error.type": "agent_error" if episode.error else None,
    }
    return SpanSpec(
        trace_id=root[0],
        span_id=root[1],
        parent_span_id=None,
        name=f"invoke_agent {episode.label}"[:200],
        start_ns=nanos(started_at),
        end_ns=nanos(max(ended_at, started_at)),
        attributes=clean(attributes),
        status="error" if episode.error else "unset",
        status_message=(episode.error or "")[:500],
        events=events,
    )
