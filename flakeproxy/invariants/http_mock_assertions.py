from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, model_validator

from flakeproxy.config.base import StrictModel
from flakeproxy.invariants.base import Invariant

FIELD = re.compile(r"^(request_count|last_request\.(body|headers)|requests\[\d+\](\.(body|headers))?)$")


class HttpAssertion(StrictModel):
    field: str = Field(
        description="request_count, last_request.body, last_request.headers, requests[N], requests[N].body/.headers"
    )
    filters: dict[str, str] = Field(
        default_factory=dict, description="method, path (a glob), and any other key is a header filter."
    )
    equals: Any = None
    contains: str | None = None

    @model_validator(mode="after")
    def _checks(self) -> HttpAssertion:
        if not FIELD.match(self.field):
            raise ValueError(
                f"field {self.field!r} is not one of request_count, last_request.body, "
                "last_request.headers, requests[N], requests[N].body, requests[N].headers"
            )
        if self.equals is None and self.contains is None:
            raise ValueError("an assertion needs equals or contains")
        return self


class HttpMockAssertions(Invariant):
    """Assertions on the requests a target (from the cell's journal) or a recording mock service received."""

    type: Literal["http_mock_assertions"]
    service: str = Field(description="A target name, or an http_mock service name.")
    assertions: list[HttpAssertion] = Field(min_length=1)
