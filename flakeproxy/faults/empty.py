from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class EmptyFault(Fault):
    """Answer with an empty body (LLM targets: a well-formed reply whose content is empty)."""

    mode: Literal["empty"]
    status: int = Field(200, ge=100, le=599)
