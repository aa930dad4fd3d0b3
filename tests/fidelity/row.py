"""One row of the fidelity table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.fidelity.real_upstream import Real


@dataclass(frozen=True)
class Row:
    fault: str  # the row's name in the table
    client: str  # py-openai, py-anthropic, node-openai, node-anthropic
    call: str  # json, stream, tools_stream, responses_stream
    real: Real
    inject: dict[str, Any]  # the flakeproxy fault
    sees: str  # what the client sees (checked against the real failure; filled from SEES)
    max_retries: int = 1
    timeout: float = 10.0
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.fault}-{self.client}-{self.call}"

    @property
    def provider(self) -> str:
        if self.call == "responses_stream":
            return "responses"
        if self.client == "py-gemini":
            return "gemini"
        return "openai" if self.client.endswith("openai") else "anthropic"
