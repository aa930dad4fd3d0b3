"""The run's verdict line says when nothing judged could have failed it: the 0%-PASS contract of issue 22 (every
invariant below critical, no threshold) on a real agent behind the real proxy, in `contract run` and `ci`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from flakeproxy import load_config
from flakeproxy.runner.ci import run_ci_async
from tests.runner.world import World, cli, world

NEVER = [
    {"id": "says-the-password", "type": "contains", "value": "swordfish", "severity": "high"},
    {"id": "answers-in-json", "type": "valid_json", "severity": "medium"},
]
MATRIX = [
    {"name": "no-chaos"},
    {"name": "search-tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}]},
]
GAP = (
    "nothing judged could fail this run: no invariant is severity: critical or gate: true (in a scenario where it "
    "applies), and scoring sets neither min_resilience nor pass_threshold"
)


@pytest.fixture(scope="module")
def zero(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with world(tmp_path_factory.mktemp("zero"), invariants=NEVER, matrix=MATRIX) as w:
        yield w


def test_contract_run_says_it_on_the_verdict_line(zero: World, tmp_path: Path) -> None:
    out = cli(zero.config, "-o", str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"resilience score 0.0%  PASS; {GAP}\n" in out.stdout
    assert "warning: contract.invariants" not in out.stderr  # validate's warning; the run says it on its verdict
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["score"]["passed"] is True and results["score"]["cannot_fail"].startswith("no invariant is")
    assert "**This gate cannot fail.** nothing judged could fail this run" in (tmp_path / "summary.md").read_text()
    assert "This gate cannot fail.</b>" in (tmp_path / "report.html").read_text()


def test_min_resilience_makes_the_same_run_fail(zero: World, tmp_path: Path) -> None:
    gated = tmp_path / "gated.yaml"
    gated.write_text(yaml.safe_dump({**zero.data, "scoring": {"min_resilience": 80}}))
    out = cli(gated, "-o", str(tmp_path / "out"))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "resilience score 0.0%  FAIL\n  - resilience 0.0 is below scoring.min_resilience 80" in out.stdout
    assert "nothing judged could fail" not in out.stdout


def test_ci_says_it_on_the_overall_line(zero: World, tmp_path: Path) -> None:
    from flakeproxy.reports.terminal import render

    config = load_config(zero.config)
    result = asyncio.run(run_ci_async(config, str(zero.config), tmp_path))
    assert result.ci is not None and result.ci.passed
    text = render(result)
    assert f"  PASS; {GAP}, and no --min-score or scoring.min_overall is set" in text
    assert "resilience score 0.0%  PASS\n" in text  # said once, on ci's own verdict line
    gated = asyncio.run(run_ci_async(config, str(zero.config), tmp_path / "gated", min_overall=50.0))
    assert gated.ci is not None and not gated.ci.passed and gated.ci.cannot_fail is None
