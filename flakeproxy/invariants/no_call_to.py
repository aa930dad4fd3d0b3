from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from flakeproxy.invariants.base import Invariant


class NoCallTo(Invariant):
    """The agent made no request to the given targets or hosts (globs) in the cell."""

    type: Literal["no_call_to"]
    targets: list[str] = Field(default_factory=list)
    hosts: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _something(self) -> NoCallTo:
        if not self.targets and not self.hosts:
            raise ValueError("no_call_to needs targets or hosts")
        return self
