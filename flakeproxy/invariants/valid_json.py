from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant


class ValidJson(Invariant):
    """The answer parses as JSON and, when json_schema is given, validates against it."""

    type: Literal["valid_json"]
    json_schema: dict[str, Any] | None = Field(None, description="A JSON Schema the answer must satisfy.")
