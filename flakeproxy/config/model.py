"""The root of flakeproxy.yaml (version "2.0"): one model tree, validated once at load."""

from __future__ import annotations

from pydantic import Field, model_validator

from flakeproxy.config.contract import Contract
from flakeproxy.config.crosscheck import cross_check
from flakeproxy.config.wire_config import WireConfig
from flakeproxy.invariants import AnyInvariant


class FlakeproxyConfig(WireConfig):
    """A whole flakeproxy.yaml."""

    # typed here (the proxy's WireConfig keeps them as written), in their places: pydantic keeps a re-declared
    # field where the base put it; the base's validators turn the mapping forms into lists first
    contract: Contract | None = None
    invariants: list[AnyInvariant] | None = Field(
        None, min_length=1, description="Run invariants: judge every answer of the mutation and chaos pillars (ci)."
    )

    @model_validator(mode="after")
    def _cross_check(self) -> FlakeproxyConfig:
        cross_check(self)
        return self
