"""Runs say what they wrote: every command that writes results ends with the paths (issue 22: `contract run`
never said where results and reports went). One real world, each command run as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.runner.world import World, world

REPORTS = ["results.json", "junit.xml", "report.html", "summary.md"]


@pytest.fixture(scope="module")
def calm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    matrix = [
        {"name": "no-chaos"},
        {"name": "search-tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}]},
    ]
    with world(tmp_path_factory.mktemp("calm"), matrix=matrix) as w:
        w.data.update(invariants=[{"type": "completes"}], mutations={"count": 2, "types": ["noise", "case_whitespace"]})
        w.config.write_text(yaml.safe_dump(w.data))
        yield w


def flakeproxy(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flakeproxy", *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def last_line(out: subprocess.CompletedProcess[str]) -> str:
    return out.stderr.strip().splitlines()[-1]


def wrote(folder: Path, *names: str) -> str:
    return "wrote " + ", ".join(str(folder / n) for n in names)


def test_contract_run_ends_with_its_files(calm: World, tmp_path: Path) -> None:
    out = flakeproxy("contract", "run", "-c", calm.config, "-o", tmp_path / "run", "--record", tmp_path / "sessions")
    assert out.returncode == 0, out.stdout + out.stderr
    assert last_line(out) == wrote(tmp_path / "run", *REPORTS) + f", {tmp_path / 'sessions'}"
    assert out.stdout.rstrip().splitlines()[-1].startswith("resilience score 100.0%  PASS")
    replayed = flakeproxy("replay", "run", tmp_path / "sessions", "-c", calm.config, "-o", tmp_path / "replay")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert last_line(replayed) == wrote(tmp_path / "replay", *REPORTS)
    report = flakeproxy("report", tmp_path / "run" / "results.json", "-f", "md", "-o", tmp_path / "again.md")
    assert last_line(report) == f"wrote {tmp_path / 'again.md'} (md report of {tmp_path / 'run' / 'results.json'})"


def test_contract_run_quiet_prints_no_progress(calm: World, tmp_path: Path) -> None:
    """-q as `ci -q`: stderr holds the files written and nothing before them (no progress lines)."""
    out = flakeproxy("contract", "run", "-q", "-c", calm.config, "-o", tmp_path, "--format", "md")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stderr == wrote(tmp_path, "results.json", "summary.md") + "\n"
    assert "resilience score 100.0%  PASS" in out.stdout


def test_score_keeps_stdout_a_number(calm: World, tmp_path: Path) -> None:
    out = flakeproxy("contract", "score", "-c", calm.config, "-o", tmp_path, "--format", "html")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "100.0\n"
    assert last_line(out) == wrote(tmp_path, "results.json", "report.html")


def test_shards_and_merge(calm: World, tmp_path: Path) -> None:
    for i in (1, 2):
        shard = flakeproxy("contract", "run", "-c", calm.config, "--shard", f"{i}/2", "-o", tmp_path / f"s{i}")
        assert shard.returncode == 0, shard.stderr
        assert last_line(shard) == wrote(tmp_path / f"s{i}", "results.json")  # its reports come from the merge
    merged = flakeproxy("merge", "-c", calm.config, tmp_path / "s1", tmp_path / "s2", "-o", tmp_path / "all")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert last_line(merged) == wrote(tmp_path / "all", *REPORTS)


def test_ci_names_its_mutations_too(calm: World, tmp_path: Path) -> None:
    out = flakeproxy("ci", "-c", calm.config, "-o", tmp_path, "-q", "--format", "junit,md")
    assert out.returncode == 0, out.stdout + out.stderr
    assert last_line(out) == wrote(tmp_path, "results.json", "junit.xml", "summary.md", "mutations.json")


def test_a_missing_config_names_flakeproxy_init(tmp_path: Path) -> None:
    out = flakeproxy("contract", "run", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr == "error: no flakeproxy.yaml here: create one with `flakeproxy init`, or pass -c FILE\n"
