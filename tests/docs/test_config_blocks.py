"""Every complete config the docs show (a YAML block with `version:`) validates as written, warnings and all:
a reader who copies one gets a config flakeproxy accepts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def yaml_blocks(text: str) -> list[str]:
    return re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M)


def _configs() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for i, block in enumerate(yaml_blocks(page.read_text())):
            data = yaml.safe_load(block)
            if isinstance(data, dict) and "version" in data:
                found.append((f"{page.relative_to(REPO)}#{i}", block))
    return found


CONFIGS = _configs()


def test_the_docs_show_complete_configs() -> None:
    names = [name for name, _ in CONFIGS]
    assert any(n.startswith("README.md") for n in names) and any("getting-started" in n for n in names)


@pytest.mark.parametrize(("name", "block"), CONFIGS, ids=[name for name, _ in CONFIGS])
def test_a_documented_config_validates(name: str, block: str, tmp_path: Path) -> None:
    from flakeproxy.config import load_config
    from flakeproxy.config.can_fail import validate_warnings

    path = tmp_path / "flakeproxy.yaml"
    path.write_text(block)
    assert validate_warnings(load_config(path)) == [], name  # what `flakeproxy validate` would print
