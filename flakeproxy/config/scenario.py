"""A scenario of the chaos matrix: the faults active while its cells run."""

from __future__ import annotations

from pydantic import Field

from flakeproxy.config.base import StrictModel
from flakeproxy.faults import ContextAttack, LlmFault, ToolFault


class Scenario(StrictModel):
    name: str = Field(min_length=1)
    description: str | None = None
    tool_faults: list[ToolFault] = Field(default_factory=list)
    llm_faults: list[LlmFault] = Field(default_factory=list)
    context_attacks: list[ContextAttack] = Field(default_factory=list)

    @property
    def tool_faults_active(self) -> bool:
        """The scenario has tool_faults (context attacks do not count: a poisoned answer is not a failed tool)."""
        return bool(self.tool_faults)

    @property
    def llm_faults_active(self) -> bool:
        return bool(self.llm_faults)

    @property
    def any_chaos_active(self) -> bool:
        """Any tool fault, LLM fault or context attack."""
        return bool(self.tool_faults or self.llm_faults or self.context_attacks)

    def applies(self, when: str) -> bool:
        """Whether an invariant with this `when` is evaluated in this scenario."""
        return {
            "always": True,
            "tool_faults_active": self.tool_faults_active,
            "llm_faults_active": self.llm_faults_active,
            "any_chaos_active": self.any_chaos_active,
            "no_chaos": not self.any_chaos_active,
        }[when]

    def first_turn(self) -> int | None:
        """The earliest turn of a conversation any of its faults can fire on (1 for a fault without `turns`); None
        when it has no fault."""
        faults = [*self.tool_faults, *self.llm_faults, *self.context_attacks]
        return min((min(f.turns) if f.turns else 1 for f in faults), default=None)

    def reaches(self, turns: int) -> bool:
        """Whether one of its faults can fire on a prompt of this many turns. One that cannot (`turns: [2]`, a
        one-turn prompt) would be a calm run under this scenario's name: a trial's counted as a chaos pass."""
        first = self.first_turn()
        return first is None or first <= turns
