"""The JSON Schema of flakeproxy.yaml, for editors and CI linters."""

from __future__ import annotations

from typing import Any

from flakeproxy.config.model import FlakeproxyConfig

SCHEMA_ID = "urn:flakeproxy:config:2.0"


def config_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) that a flakeproxy.yaml version "2.0" satisfies."""
    schema = FlakeproxyConfig.model_json_schema(mode="validation")
    invariants = schema["$defs"]["Contract"]["properties"]["invariants"]
    spec_form = {
        "type": "object",
        "description": "The invariants-weights-gates form: {name: {description, weight, gate, check: {type, ...}}}.",
        "additionalProperties": {
            "type": "object",
            "required": ["check"],
            "properties": {"check": {"type": "object", "required": ["type"]}},
        },
    }
    schema["$defs"]["Contract"]["properties"]["invariants"] = {"anyOf": [invariants, spec_form]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}
