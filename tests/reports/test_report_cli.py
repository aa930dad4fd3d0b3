"""`flakeproxy report` re-renders a results.json in every format, an interrupted one too, running nothing;
`contract run` writes the reports next to results.json."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from flakeproxy.reports import REGISTRY
from flakeproxy.results import RunResult
from tests.reports.conftest import interrupted
from tests.runner.world import cli, sigterm_mid_run, world


def report(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flakeproxy", "report", *args], capture_output=True, text=True, timeout=60
    )


STARTS = {
    "terminal": "contract 'Finance Agent Contract', seed 7",
    "junit": '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites',
    "html": "<!DOCTYPE html>",
    "md": "## ❌ flakeproxy",
}


def test_every_registered_format_is_rendered_here_and_offered_by_the_cli() -> None:
    """The registry is the one list of formats: this file renders each, and `--format`'s help names each file."""
    assert set(STARTS) == set(REGISTRY)
    help_text = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "contract", "run", "--help"], capture_output=True, text=True, timeout=60
    ).stdout
    assert all(f"{name} ({fmt.file})" in " ".join(help_text.split()) for name, fmt in REGISTRY.items()), help_text


@pytest.mark.parametrize(("fmt", "start"), list(STARTS.items()))
def test_report_renders_every_format(fmt: str, start: str, demo_dir: Path, tmp_path: Path) -> None:
    out = report(str(demo_dir / "naive" / "results.json"), "-f", fmt)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(start)
    target = tmp_path / "sub" / f"report.{fmt}"
    written = report(str(demo_dir / "naive" / "results.json"), "-f", fmt, "-o", str(target))
    assert written.returncode == 0, written.stderr
    assert target.read_text() == out.stdout


def test_report_of_an_interrupted_run_says_so(demo: dict[str, RunResult], saved: Callable[[RunResult], Path]) -> None:
    path = saved(interrupted(demo["naive"]))
    for fmt, says in (
        ("terminal", "INCOMPLETE: The run was interrupted (SIGINT)"),
        ("html", "<b>Interrupted.</b> The run was interrupted"),
        ("md", "> **Interrupted.**"),
        ("junit", 'type="interrupted"'),
    ):
        out = report(str(path), "-f", fmt)
        assert out.returncode == 0, out.stderr
        assert says in out.stdout, fmt


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read it (No such file or directory)"),
        ("{not json", "not JSON (line 1"),
        ('{"schema_version": "4"}', "not a flakeproxy results.json of schema 4"),
    ],
)
def test_report_user_errors_are_one_line(content: str | None, message: str, tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    out = report(str(path))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr


def test_report_is_not_a_gate_and_its_help_says_so(demo: dict[str, RunResult], demo_dir: Path) -> None:
    """A trial read exit 0 of `report DIR` on a FAILed run as a pass: report renders, the run's own exit code (or
    compare) gates, and --help says so."""
    assert demo["naive"].score is not None and demo["naive"].score.verdict == "FAIL"
    out = report(str(demo_dir / "naive"))
    assert out.returncode == 0 and "FAIL" in out.stdout, out.stderr
    help_text = " ".join(report("--help").stdout.split())
    assert "Exit 0 once the report is rendered, whatever the run's verdict (a FAIL too): report is not a gate." in (
        help_text
    )
    assert "`contract run`, `contract score`, `ci`" in help_text and "flakeproxy compare" in help_text


def test_report_takes_the_output_folder_as_compare_does(demo_dir: Path, tmp_path: Path) -> None:
    """A new user's trial: `flakeproxy report DIR` failed ("is a directory") where compare took the folder."""
    folder = report(str(demo_dir / "naive"), "-f", "md")
    assert folder.returncode == 0, folder.stderr
    assert folder.stdout == report(str(demo_dir / "naive" / "results.json"), "-f", "md").stdout
    empty = report(str(tmp_path))
    assert empty.returncode == 2 and empty.stderr == (
        f"error: {tmp_path}: a folder with no results.json in it; pass a run's output folder or its results.json\n"
    )


def test_contract_run_writes_the_reports(tmp_path: Path) -> None:
    with world(tmp_path, "naive") as w:
        default = cli(w.config)
        chosen = cli(w.config, "--format", "junit", "-o", str(tmp_path / "chosen"))
        wrong = cli(w.config, "--format", "junit,pdf")
    assert default.returncode == 1, default.stderr
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["junit.xml", "report.html", "results.json", "summary.md"]
    assert "**FAIL**" in (tmp_path / "out" / "summary.md").read_text()
    assert chosen.returncode == 1, chosen.stderr
    assert sorted(p.name for p in (tmp_path / "chosen").iterdir()) == ["junit.xml", "results.json"]
    assert wrong.returncode == 2
    assert wrong.stderr == (
        "error: --format 'junit,pdf': unknown format 'pdf'; use a comma-separated list of junit, html, md, "
        "terminal (or none)\n"
    )


def test_an_interrupted_contract_run_still_writes_its_reports(tmp_path: Path) -> None:
    results = tmp_path / "out" / "results.json"
    with world(tmp_path, delay_s=0.4) as w:
        code, err = sigterm_mid_run(w.config, results)
    assert code == 143, err
    reports = ("results.json", "junit.xml", "report.html", "summary.md")
    assert err.strip().splitlines()[-2] == "wrote " + ", ".join(str(tmp_path / "out" / f) for f in reports)
    assert "> **Interrupted.**" in (tmp_path / "out" / "summary.md").read_text()
    assert "<b>Interrupted.</b>" in (tmp_path / "out" / "report.html").read_text()
    assert 'type="interrupted"' in (tmp_path / "out" / "junit.xml").read_text()


def test_a_schema_3_results_file_still_renders_and_compares(demo_dir: Path, tmp_path: Path) -> None:
    """Schema 4 only added optional fields (spend, conversations) and an outcome: last version's files still read."""
    import json

    data = json.loads((demo_dir / "naive" / "results.json").read_text())
    data["schema_version"] = "3"
    for key in ("spend", "pricing_as_of", "budget_crossed"):
        data.pop(key, None)
    for episode in data["episodes"]:
        for key in ("spend", "turns", "transcript"):
            episode.pop(key, None)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    for fmt in STARTS:
        out = report(str(old), "-f", fmt)
        assert out.returncode == 0 and out.stdout.startswith(STARTS[fmt]), (fmt, out.stderr)
    compared = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "compare", str(old), str(demo_dir / "naive" / "results.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert compared.returncode in (0, 4), compared.stdout + compared.stderr
