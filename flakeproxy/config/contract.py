"""A contract: the invariants that must hold in every scenario of the chaos matrix."""

from __future__ import annotations

from pydantic import Field

from flakeproxy.config.wire_config import WireContract
from flakeproxy.invariants import AnyInvariant


class Contract(WireContract):  # no docstring, as before: the schema's Contract has no description
    invariants: list[AnyInvariant] = Field(min_length=1)
