"""Whether a context attack reached the agent's model, read from one episode's journal (pure).

An attack on a tool's answer reached the agent when the proxy changed the bytes the agent got; it reached
the model when a later LLM request of the same episode carried its payload (the proxy scans every LLM
request of an episode under a context attack and lists, in `carries_attacks`, whose payload it carries). An
attack that rewrote an LLM request itself (memory poisoning) reached the model when it applied.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from flakeproxy.wire.record import FaultRecord, read_fault

UNSEEN = (
    "flakeproxy sees none of the agent's LLM calls (no target with api:), so it cannot tell; route the agent's "
    "LLM calls through a listener with a target that has api:"
)


def _is_llm(entry: dict[str, Any], llm_targets: Collection[str]) -> bool:
    return any(t in llm_targets for t in entry.get("targets") or [])


def _where(entry: dict[str, Any]) -> str:
    seq = f" #{entry['seq']}" if entry.get("seq") is not None else ""
    return f"carried by LLM request{seq} {entry.get('method', '')} {entry.get('url', '')}".rstrip()


def delivery(
    record: FaultRecord, entry: dict[str, Any], journal: list[dict[str, Any]], llm_targets: Collection[str]
) -> tuple[bool | None, str]:
    """(reached the model: True, False or None for unknown, and the evidence) for an applied context attack."""
    if _is_llm(entry, llm_targets):
        return True, "it rewrote the request to the model"
    if not llm_targets:
        return None, UNSEEN
    after = [e for e in journal if _is_llm(e, llm_targets) and e.get("started_at", 0) >= entry.get("started_at", 0)]
    carrying = [e for e in after if record.index in (e.get("carries_attacks") or [])]
    if carrying:
        return True, _where(carrying[0])
    if record.replayed:  # a trial's replayed attack: its requests carried the payload, unscanned, and read "not"
        return None, (
            "a replayed session's LLM requests are not scanned for the attack's payload, so whether it reached the "
            "model is unknown"
        )
    if not any(_is_llm(e, llm_targets) for e in journal):  # none at all: its LLM calls may bypass the proxy
        return None, (
            "the proxy saw none of this episode's LLM calls: if the agent calls its model, not through flakeproxy "
            "(its base URL must be a listener of a target with api:), so whether the attack reached it is unknown"
        )
    if not after:
        return False, "the agent made no LLM request after the tool answered"
    return False, f"none of the {len(after)} LLM request(s) after the tool answered carried its payload"


def mark_delivery(journal: list[dict[str, Any]], llm_targets: Collection[str]) -> list[dict[str, Any]]:
    """The episode's journal with every applied context attack's record saying whether it reached the model."""
    out = []
    for entry in journal:
        record = read_fault(entry.get("fault"))
        if record is not None and record.context_attack and record.applied and record.reached_model is None:
            reached, evidence = delivery(record, entry, journal, llm_targets)
            update = {"reached_model": reached, "model_evidence": evidence}
            entry = {**entry, "fault": record.model_copy(update=update).model_dump(mode="json")}
        out.append(entry)
    return out
