from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from flakeproxy.faults.base import Fault


class SchemaDriftFault(Fault):
    """Rename or drop fields (at any depth) of the upstream's JSON answer, as a changed API would."""

    mode: Literal["schema_drift"]
    rename: dict[str, str] = Field(default_factory=dict, description="old field name -> new name")
    drop: list[str] = Field(default_factory=list, description="field names to remove")

    @model_validator(mode="after")
    def _something_drifts(self) -> SchemaDriftFault:
        if not self.rename and not self.drop:
            raise ValueError("schema_drift needs rename: {old: new} or drop: [field], or both")
        return self
