"""What the proxy (or a python tool wrapper, or the replayer) tells the runner about one decided fault.

One typed record from the producer to every reader: `applied` has no default, so a record that does not
say whether its fault reached the agent is refused when it is read, never taken for applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from flakeproxy.wire.coverage import Coverage

Section = Literal["tool_faults", "llm_faults", "context_attacks"]


class FaultRecord(BaseModel):
    """One fault decided on one request, and what it did.

    Two levels of delivery: `applied` (its effect reached the agent: bytes it received changed, a reply or a
    close it got, a delay it waited) and, for context attacks on a tool's answer, `reached_model` (the
    attack's payload or canary appeared in a later LLM request of the same episode).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    scenario: str | None = Field(description="The scenario it was decided in.")
    section: Section
    index: int = Field(description="Its place in the scenario's section.")
    kind: str = Field(description="The fault's mode, or the context attack's type.")
    call_index: int | None = Field(None, description="The n-th matching call of the episode it fired on.")
    seed: int | None = Field(None, description="The seed of its decision (None when replayed).")
    turn: int | None = Field(None, description="The conversation turn it fired on (None: a one-turn prompt).")
    replayed: bool = Field(False, description="Served again from a recorded session, not decided now.")
    applied: bool = Field(description="Its effect reached the agent (decided when the proxy handed it over).")
    effect: str | None = Field(description="What changed for the agent, when applied.")
    not_applied_reason: str | None = Field(description="Why it changed nothing, when not applied.")
    settled: bool = Field(
        description="False: the exchange was still open when the episode ended (after the bounded wait), so "
        "`applied: false` may only mean 'not yet'."
    )
    reached_model: bool | None = Field(
        None,
        description="Context attacks: True when the payload reached the agent's model (a later LLM request of "
        "the episode carried it, or the attack rewrote an LLM request), False when the agent did not pass it "
        "on, None when not a context attack or flakeproxy cannot see the agent's LLM calls.",
    )
    model_evidence: str | None = Field(None, description="Which request carried the payload, or why none did.")

    @property
    def context_attack(self) -> bool:
        return self.section == "context_attacks"

    @property
    def label(self) -> str:
        return f"{self.section}[{self.index}] {self.kind}"

    def describe(self) -> str:
        """What it did (applied), or why not; for a context attack, whether it reached the model."""
        if not self.applied:
            return self.not_applied_reason or "not applied"
        said = self.effect or "applied"
        if self.context_attack and self.reached_model is not None:
            said += "; reached the model" if self.reached_model else "; did not reach the model"
        if self.model_evidence:
            said += f" ({self.model_evidence})"
        return said

    @property
    def counts(self) -> bool:
        """Whether it makes its scenario's condition true for the episode: applied, and for a context attack,
        delivered to the model."""
        return self.applied and (not self.context_attack or self.reached_model is True)


def read_fault(data: Any) -> FaultRecord | None:
    """A journal entry's `fault` as a record (None when the entry has no fault); raises if it is malformed."""
    if data is None:
        return None
    if isinstance(data, FaultRecord):
        return data
    return FaultRecord.model_validate(data)


def fault_json(decided: Mapping[str, Any], coverage: Coverage | None) -> dict[str, Any]:
    """A journal entry's fault as JSON: what was decided and what it did (a FaultRecord, checked)."""
    did = coverage.record() if coverage is not None else NEVER_APPLIED
    out = FaultRecord.model_validate({**decided, **did}).model_dump(mode="json")
    return out if out["turn"] is not None else {k: v for k, v in out.items() if k != "turn"}  # one-turn: as before


#: The coverage of a fault whose action never reached the code that applies it.
NEVER_APPLIED: dict[str, Any] = {
    "applied": False,
    "effect": None,
    "not_applied_reason": "the fault was decided but never applied (its request ended first)",
    "settled": True,
}
