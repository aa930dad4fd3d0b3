from __future__ import annotations

from typing import Literal

from pydantic import Field

from flakeproxy.faults.base import Fault


class ErrorFault(Fault):
    """Answer for the upstream with an HTTP error (provider-shaped JSON for LLM targets)."""

    mode: Literal["error"]
    error_code: int = Field(503, ge=400, le=599)
    message: str | None = Field(None, description="Error text; None = the status's standard text.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra headers, e.g. Retry-After.")
