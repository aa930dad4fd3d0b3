"""A scenario of the chaos matrix: the faults active while its cells run."""

from __future__ import annotations

from pydantic import Field

from flakeproxy.config.base import StrictModel
from flakeproxy.faults import LLM_ATTACKS, ContextAttack, LlmFault, ToolFault


class Scenario(StrictModel):
    name: str = Field(min_length=1)
    description: str | None = None
    tool_faults: list[ToolFault] = Field(default_factory=list)
    llm_faults: list[LlmFault] = Field(default_factory=list)
    context_attacks: list[ContextAttack] = Field(default_factory=list)

    @property
    def tool_faults_active(self) -> bool:
        """Tool faults, or attacks planted in tool answers (indirect_injection, overflow)."""
        return bool(self.tool_faults) or any(not isinstance(a, LLM_ATTACKS) for a in self.context_attacks)

    @property
    def llm_faults_active(self) -> bool:
        """LLM faults, or attacks on what the agent sends its LLM (memory_poisoning)."""
        return bool(self.llm_faults) or any(isinstance(a, LLM_ATTACKS) for a in self.context_attacks)

    @property
    def any_chaos_active(self) -> bool:
        return self.tool_faults_active or self.llm_faults_active

    def applies(self, when: str) -> bool:
        """Whether an invariant with this `when` is evaluated in this scenario."""
        return {
            "always": True,
            "tool_faults_active": self.tool_faults_active,
            "llm_faults_active": self.llm_faults_active,
            "any_chaos_active": self.any_chaos_active,
            "no_chaos": not self.any_chaos_active,
        }[when]
