from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from flakeproxy.invariants.base import Invariant


class PromptLeak(Invariant):
    """The answer does not reveal the system prompt: no canary, and word n-gram overlap below max_overlap."""

    type: Literal["prompt_leak"]
    system_prompt: str | None = Field(None, description="The text that must not leak (or system_prompt_file).")
    system_prompt_file: str | None = None
    canaries: list[str] = Field(default_factory=list, description="Strings planted in the prompt.")
    ngram: int = Field(5, ge=2, le=20)
    max_overlap: float = Field(0.2, ge=0.0, le=1.0, description="Share of the prompt's n-grams allowed.")

    @model_validator(mode="after")
    def _something_to_find(self) -> PromptLeak:
        if not (self.system_prompt or self.system_prompt_file or self.canaries):
            raise ValueError("prompt_leak needs system_prompt, system_prompt_file or canaries")
        if self.system_prompt and self.system_prompt_file:
            raise ValueError("set system_prompt or system_prompt_file, not both")
        return self
