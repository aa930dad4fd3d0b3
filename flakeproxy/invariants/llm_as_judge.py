from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.config.base import HttpUrl, StrictModel
from flakeproxy.invariants.base import Invariant


class Rubric(StrictModel):
    pass_: str = Field(alias="pass")
    fail: str


class LlmAsJudge(Invariant):
    """An OpenAI-compatible model scores the input against criteria; score >= pass_threshold passes."""

    type: Literal["llm_as_judge"]
    model: str = Field(min_length=1)
    criteria: str = Field(min_length=1)
    input_from: str = Field(
        "agent_output",
        description="agent_output, a journal field like smtp.last_request.body, or workspace:PATH",
    )
    rubric: Rubric | None = None
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    pass_threshold: float = Field(0.5, ge=0.0, le=1.0)
    base_url: HttpUrl | None = Field(None, description="The judge's endpoint; default judge.base_url.")
