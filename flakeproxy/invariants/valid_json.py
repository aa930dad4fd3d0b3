from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, check, excerpt


class ValidJson(Invariant):
    """The answer parses as JSON and, when json_schema is given, validates against it."""

    type: Literal["valid_json"]
    reads_whole: ClassVar[bool] = True
    json_schema: dict[str, Any] | None = Field(None, description="A JSON Schema the answer must satisfy.")

    def evaluate(self, obs: Observation) -> Verdict:
        text = obs.text or ""
        try:
            data = json.loads(text)
        except ValueError as e:
            return check(False, "", f"not JSON ({e})", excerpt=excerpt(text))
        if self.json_schema is None:
            return check(True, "valid JSON", "")
        import jsonschema  # here, not at the top: the proxy loads this model with the config, never judges

        errors = sorted(jsonschema.Draft202012Validator(self.json_schema).iter_errors(data), key=str)
        return check(
            not errors,
            "valid JSON that satisfies the schema",
            f"JSON that breaks the schema: {errors[0].message if errors else ''}",
            errors=[e.message for e in errors[:5]],
        )
