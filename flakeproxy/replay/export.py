"""Sessions from a results.json: each episode's journal (already redacted) as a replayable session."""

from __future__ import annotations

from flakeproxy.config.replays import Session
from flakeproxy.replay.build import exchange_from_entry
from flakeproxy.replay.files import slug
from flakeproxy.results import Episode, RunResult
from flakeproxy.wire.call import IN_PROCESS
from flakeproxy.wire.record import read_fault

NO_TIMING = "exported from results.json: SSE event timing is not kept there, so events replay without delays"


def failing_episodes(result: RunResult) -> set[str]:
    """The episodes of the cells that failed or errored (and of failed or errored pillar items)."""
    ids = {e for c in result.cells if c.outcome in ("fail", "error") for e in c.episodes}
    if result.ci is not None:
        ids |= {i.episode for p in result.ci.pillars for i in p.items if i.outcome in ("fail", "error")}
    if result.replay is not None:
        ids |= {s.episode for s in result.replay.sessions if s.outcome in ("fail", "error") and s.episode}
    return ids


#: The note of a session whose faults were applied in the agent's process (judging reads it).
APPLIED_IN_PROCESS = "faults applied in the agent's process"


def fault_notes(episode: Episode) -> list[str]:
    """The note a session of a chaos episode carries: its responses are the faulted ones the agent received; faults
    a python agent's wrapped tools applied in its own process are not on the wire, and a replay does not repeat
    them."""
    wire: set[str] = set()
    own: set[str] = set()
    for entry in episode.journal:
        record = read_fault(entry.get("fault"))
        if record is not None and record.applied:
            (own if str(entry.get("url", "")).startswith(IN_PROCESS) else wire).add(record.label)
    notes = []
    if wire:
        notes.append(
            f"recorded under scenario {episode.scenario}; faults applied on the wire: {', '.join(sorted(wire))}"
        )
    if own:
        notes.append(
            f"recorded under scenario {episode.scenario}; {APPLIED_IN_PROCESS} (its wrapped tools), which a replay "
            f"does not repeat: {', '.join(sorted(own))}"
        )
    return notes


def session_of(episode: Episode, contract: str | None) -> Session:
    exchanges = [exchange_from_entry(e) for e in episode.journal]
    notes = []
    if any(x.events is not None for x in exchanges):
        notes.append(NO_TIMING)
    if any(e.get("body_truncated") for e in episode.journal):
        notes.append("exported from results.json: a response body was over the journal's 64 KiB cap and is cut")
    if any(int(e.get("request_bytes") or 0) > len(str(e.get("request_body") or "")) for e in episode.journal):
        notes.append("exported from results.json: a request body was capped; match it with match: order or args")
    notes += fault_notes(episode)
    return Session(
        id=slug(episode.label),
        name=episode.label,
        source="results.json",
        input=episode.prompt,
        contract=contract,
        scenario=episode.scenario if episode.faults() else None,
        answer=episode.answer,
        turns=episode.turns,
        answers=[t.answer for t in episode.transcript] if episode.transcript is not None else None,
        exchanges=exchanges,
        notes=notes,
    )


def export_sessions(result: RunResult, failed: bool) -> list[Session]:
    """The sessions of every episode (or of the failing cells' episodes) that has a journal."""
    wanted = failing_episodes(result) if failed else None
    return [session_of(e, result.contract) for e in result.episodes if (wanted is None or e.id in wanted) and e.journal]
