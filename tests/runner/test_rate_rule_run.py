"""replica_aggregation: rate on real runs through the CLI: a flaky agent's critical cell is INCONCLUSIVE (exit 4)
and says so in results.json, the terminal, junit.xml (skipped, parsed by junitparser), summary.md and
report.html (in Chromium); enough clean replicas PASS (exit 0), a broken agent FAILs (exit 1)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import junitparser
import pytest
import yaml

from flakeproxy.judging.compare_results import run_counts
from flakeproxy.judging.stats_compare import Counts
from flakeproxy.reports import write
from flakeproxy.results import RunResult
from tests.reports.browser import chromium, open_page
from tests.reports.test_junit import SCHEMA
from tests.runner.world import cli, world

# fails the n-th call when n % every == every - 1 (every 0: never, every 1: always)
AGENT = """
import pathlib, sys
counter, every = pathlib.Path(sys.argv[1]), int(sys.argv[2])
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
bad = every > 0 and n % every == every - 1
print("I made it up: $187.23" if bad else "AAPL price unavailable (source: feed down)")
"""
INVARIANT = {"id": "no-figures", "type": "regex", "pattern": r"\$\d", "negate": True, "severity": "critical"}


def _run(tmp_path: Path, every: int, replicas: int) -> tuple[int, str, RunResult]:
    with world(tmp_path, invariants=[INVARIANT], matrix=[{"name": "calm"}], run={"replicas": replicas}) as w:
        w.data["agent"] = {
            "type": "command",
            "command": [sys.executable, "-c", AGENT, str(tmp_path / "n"), str(every)],
            "reset_command": [sys.executable, "-c", "pass"],
        }
        w.data["scoring"] = {"replica_aggregation": "rate", "min_pass_rate": 0.8}
        w.config.write_text(yaml.safe_dump(w.data))
        done = cli(w.config, "--format", "junit,md,html")
    assert done.returncode in (0, 1, 4), done.stderr
    result = RunResult.model_validate_json((tmp_path / "out" / "results.json").read_text())
    return done.returncode, done.stdout, result


@pytest.mark.parametrize(
    ("every", "replicas", "code", "outcome", "reason"),
    [
        # 20 of 20: the exact lower bound 0.025 ** (1 / 20) = 0.8316 is at or above 0.8
        (0, 20, 0, "pass", "20/20 passed, 95% interval 0.83-1.00 is at or above 0.80 (rate)"),
        # 0 of 3: the exact upper bound 1 - 0.025 ** (1 / 3) = 0.7076 is below 0.8
        (1, 3, 1, "fail", "0/3 passed, 95% interval 0.00-0.71 is below 0.80 (rate)"),
    ],
)
def test_the_rate_rule_passes_and_fails_with_exit_codes(
    tmp_path: Path, every: int, replicas: int, code: int, outcome: str, reason: str
) -> None:
    returncode, _, result = _run(tmp_path, every, replicas)
    [cell] = result.cells
    assert (returncode, cell.outcome, result.score and result.score.verdict) == (code, outcome, outcome.upper())
    assert cell.reason.startswith(reason) and cell.pass_rate_interval == "clopper_pearson"


def test_a_flaky_critical_cell_is_inconclusive_everywhere(tmp_path: Path) -> None:
    returncode, stdout, result = _run(tmp_path, 3, 3)
    [cell] = result.cells
    # 2 of 3, exact 95% interval by hand: the lower bound solves 3p^2(1 - p) + p^3 = 0.025 (p = 0.0943), the
    # upper 1 - p^3 = 0.025 (p = 0.975 ** (1 / 3) = 0.9916); it straddles 0.8
    assert (returncode, cell.outcome, cell.replicas) == (4, "inconclusive", ["pass", "pass", "fail"])
    assert (cell.pass_rate_low, cell.pass_rate_high) == (
        pytest.approx(0.0943, abs=2e-4),
        pytest.approx(0.9916, abs=2e-4),
    )
    reason = "2/3 passed, 95% interval 0.09-0.99 straddles 0.80 (rate); 1 of 3 episodes failed; first: "
    assert cell.reason.startswith(reason)
    assert result.score is not None and (result.score.verdict, result.score.resilience) == ("INCONCLUSIVE", None)
    assert "INCONCLUSIVE no-figures in calm [critical]: " + reason in stdout
    assert "resilience score not scored  INCONCLUSIVE" in stdout and "settle it: more replicas" in stdout
    out = tmp_path / "out"
    SCHEMA.validate(out / "junit.xml")  # the JUnit schema CI servers read (tests/reports/junit.xsd)
    [suite] = list(junitparser.JUnitXml.fromfile(str(out / "junit.xml")))
    [case] = list(suite)
    [skipped] = case.result
    assert isinstance(skipped, junitparser.Skipped) and skipped.message == f"INCONCLUSIVE: {cell.reason}"
    assert (suite.tests, suite.skipped, suite.failures, suite.errors) == (1, 1, 0, 0)
    summary = (out / "summary.md").read_text()
    assert "## ❔ flakeproxy: Finance Agent Contract: **INCONCLUSIVE**" in summary
    assert "**Inconclusive** (too few replicas to tell; left out of the score like n/a):" in summary
    assert "| INCONCLUSIVE | no-figures | calm | critical | 2/3 passed" in summary
    # compare counts an INCONCLUSIVE cell by its replicas (2 of 3), like any other
    assert run_counts(result, "results.json")["no-figures x calm"] == Counts(passes=2, replicas=3)
    _html_in_chromium(result, tmp_path / "html")


def _html_in_chromium(result: RunResult, out: Path) -> None:
    if chromium() is None:
        pytest.skip("headless Chromium is missing: apt-get install -y chromium (scripts/test does it as root)")
    [path] = write(result, out, ["html"])
    probes = {
        "verdict": "document.querySelector('.verdict').textContent",
        "grid": "[...document.querySelectorAll('table.matrix a.o-inconclusive')].map(a => a.textContent)",
        "colour": "getComputedStyle(document.querySelector('table.matrix a.o-inconclusive')).color",
        "listed": "document.getElementById('inconclusive').nextElementSibling.nextElementSibling.innerText",
    }
    page = asyncio.run(open_page(path, probes, width=1200, height=900))
    assert page.errors == [] and page.requests == [path.resolve().as_uri()]
    assert page.values["verdict"] == "INCONCLUSIVE" and page.values["grid"] == ["INCONCLUSIVE ~"]  # ~: flaky
    assert page.values["colour"] == "rgb(91, 63, 176)"  # --open, not PASS green
    assert "critical invariant no-figures (keeps the run from PASS) is INCONCLUSIVE" in page.values["listed"]


def test_merged_shards_are_inconclusive_as_the_whole_run(tmp_path: Path) -> None:
    with world(tmp_path, invariants=[INVARIANT], matrix=[{"name": "calm"}], run={"replicas": 3}) as w:
        w.data["agent"] = {
            "type": "command",
            "command": [sys.executable, "-c", AGENT, str(tmp_path / "n"), "3"],
            "reset_command": [sys.executable, "-c", "pass"],
        }
        w.data["scoring"] = {"replica_aggregation": "rate", "min_pass_rate": 0.8}
        w.config.write_text(yaml.safe_dump(w.data))
        shards = [cli(w.config, "--shard", f"{i}/2", "-o", str(tmp_path / f"s{i}")) for i in (1, 2)]
        merged = subprocess.run(
            [sys.executable, "-m", "flakeproxy", "merge", "-c", str(w.config), str(tmp_path / "s1"),
             str(tmp_path / "s2"), "-o", str(tmp_path / "merged")],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert [s.returncode for s in shards] == [0, 0], [s.stderr for s in shards]
    assert merged.returncode == 4, merged.stdout + merged.stderr
    result = RunResult.model_validate_json((tmp_path / "merged" / "results.json").read_text())
    [cell] = result.cells
    assert cell.outcome == "inconclusive" and sorted(cell.replicas) == ["fail", "pass", "pass"]
    assert result.score is not None and result.score.verdict == "INCONCLUSIVE"
