from __future__ import annotations

import json
import re
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from flakeproxy.config.base import StrictModel
from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.journal_fields import FieldMissing, matching, read_field
from flakeproxy.judging.verdict import Observation, Verdict, check

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
    """Assertions on the requests a target (from the episode's journal) or a recording mock service received."""

    type: Literal["http_mock_assertions"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    service: str = Field(description="A target name, or an http_mock service name.")
    assertions: list[HttpAssertion] = Field(min_length=1)

    def evaluate(self, obs: Observation) -> Verdict:
        """Over the requests the proxy journaled for the target named by `service` in this episode."""
        results = []
        for a in self.assertions:
            entries = matching(obs.journal, self.service, a.filters)
            try:
                value = read_field(entries, a.field)
            except FieldMissing as e:
                return check(False, "", f"{a.field}: {e}", requests=len(entries))
            shown = repr(value[:200]) if isinstance(value, str) else json.dumps(value)[:200]
            if a.equals is not None and value != a.equals and str(value) != str(a.equals):
                return check(False, "", f"{a.field} is {shown}, expected {a.equals!r}", requests=len(entries))
            if a.contains is not None and a.contains not in (value if isinstance(value, str) else json.dumps(value)):
                return check(False, "", f"{a.field} does not contain {a.contains!r}: {shown}")
            results.append(f"{a.field} ok")
        return check(True, "; ".join(results), "")
