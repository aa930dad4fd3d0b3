"""A contract: the invariants that must hold in every scenario of the chaos matrix."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from flakeproxy.config.base import StrictModel
from flakeproxy.config.scenario import Scenario
from flakeproxy.invariants import AnyInvariant


class Contract(StrictModel):
    name: str = Field(min_length=1)
    description: str | None = None
    invariants: list[AnyInvariant] = Field(min_length=1)
    chaos_matrix: list[Scenario] | None = Field(None, min_length=1, description="Or at the top level.")

    @field_validator("invariants", mode="before")
    @classmethod
    def _spec_mapping(cls, value: Any) -> Any:
        return spec_mapping(value)


def spec_mapping(value: Any) -> Any:
    """Also the invariants-weights-gates syntax: {name: {description, weight, gate, check: {type, ...}}}."""
    if not isinstance(value, dict):
        return value
    flat = []
    for name, spec in value.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("check"), dict):
            raise ValueError(f"invariant {name!r}: the mapping form needs check: {{type: ..., ...}}")
        flat.append({"id": name, **{k: v for k, v in spec.items() if k != "check"}, **spec["check"]})
    return flat
