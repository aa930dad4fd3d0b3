"""A contract: the invariants that must hold in every scenario of the chaos matrix."""

from __future__ import annotations

from pydantic import Field

from flakeproxy.config.base import StrictModel
from flakeproxy.config.scenario import Scenario
from flakeproxy.invariants import AnyInvariant


class Contract(StrictModel):
    name: str = Field(min_length=1)
    description: str | None = None
    invariants: list[AnyInvariant] = Field(min_length=1)
    chaos_matrix: list[Scenario] | None = Field(None, min_length=1, description="Or at the top level.")
