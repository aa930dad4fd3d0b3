"""`flakeproxy schema` is a JSON Schema that accepts every example and rejects broken configs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.config.base_config import BASE, edit
from tests.conftest import EXAMPLES


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "schema"], capture_output=True, text=True, check=True, timeout=30
    )
    schema = json.loads(out.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_schema_accepts_every_example(schema: dict[str, Any], path: Path) -> None:
    errors = list(_validator(schema).iter_errors(yaml.safe_load(path.read_text())))
    assert errors == [], [e.message for e in errors]


def test_schema_accepts_the_base_config(schema: dict[str, Any]) -> None:
    _validator(schema).validate(yaml.safe_load(BASE))


@pytest.mark.parametrize(
    "text",
    [
        edit("mode: error", "mode: explode"),
        edit('      pattern: "(?i)source"\n', ""),
        edit("golden_prompts:", "golden_prompt:"),
        edit("severity: critical", "severity: critcal"),
        edit("max_tokens: 20", "max_tokens: 20\n        probability: 1.5"),
    ],
    ids=["unknown-mode", "regex-without-pattern", "unknown-key", "bad-severity", "probability-above-1"],
)
def test_schema_rejects_broken_configs(schema: dict[str, Any], text: str) -> None:
    assert not _validator(schema).is_valid(yaml.safe_load(text))
