"""A replay run's reports: junit.xml has one testcase per session (valid against the schema CI servers read),
summary.md and report.html list the sessions with what was served and why, everything the agent said escaped."""

from __future__ import annotations

from pathlib import Path

import junitparser
import xmlschema

from flakeproxy.reports import render, write
from flakeproxy.reports.facts import headline, title, verdict
from flakeproxy.results import EpisodeVerdict, ReplayResult, ReplaySessionResult, RunResult

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))
XSS = "<script>alert(1)</script>"


def replay_run(base: RunResult) -> RunResult:
    """A `flakeproxy replay run` result: sessions, no matrix, no ci, no contract score."""
    fail = EpisodeVerdict(episode="e2", prompt="p", outcome="fail", reason=f"matched {XSS}")
    sessions = [
        ReplaySessionResult(session="calm-p0", source="s/calm.yaml", episode="e1", outcome="pass", reason="ok",
                            weight=4, served=4, answer_matches_recording=True),
        ReplaySessionResult(session="outage", source="s/outage.yaml", episode="e2", outcome="fail",
                            reason=f"1 invariant fails: {XSS}", weight=3, served=2, verdicts={"cite": fail}),
        ReplaySessionResult(session="moved-tool", source="config", episode="e3", outcome="error", weight=3,
                            reason="unmatched request GET http://x/v2/quotes (no target; listener tools)",
                            unmatched=["GET http://x/v2/quotes (no target; listener tools)"]),
    ]  # fmt: skip
    replay = ReplayResult(score=40.0, passed=False, verdict="FAIL", summary="1/3 sessions hold", sessions=sessions)
    return base.model_copy(update={"ci": None, "score": None, "cells": [], "coverage": [], "replay": replay})


def test_a_replay_run_is_titled_and_scored_by_its_replay(demo_ci: dict[str, RunResult]) -> None:
    result = replay_run(demo_ci["careful"])
    assert (verdict(result), headline(result), title(result).split(":")[0]) == (
        "FAIL",
        ("40.0%", "replay score"),
        "replay",
    )


def test_junit_has_a_testcase_per_session(demo_ci: dict[str, RunResult], tmp_path: Path) -> None:
    [path] = write(replay_run(demo_ci["careful"]), tmp_path, ["junit"])
    SCHEMA.validate(path)
    xml = junitparser.JUnitXml.fromfile(str(path))
    [suite] = [s for s in xml if s.name == "replay sessions"]
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (3, 1, 1, 0)
    cases = {c.name: c for c in suite}
    assert cases["calm-p0"].is_passed
    [failure] = cases["outage"].result
    assert isinstance(failure, junitparser.Failure) and XSS in (failure.message or "")
    [error] = cases["moved-tool"].result
    assert isinstance(error, junitparser.Error) and "unmatched: GET http://x/v2/quotes" in (error.text or "")
    assert {p.name: p.value for p in suite.properties()}["score"] == "40.00"


def test_markdown_and_html_list_the_sessions_escaped(demo_ci: dict[str, RunResult]) -> None:
    result = replay_run(demo_ci["careful"])
    md, html = render(result, "md"), render(result, "html")
    assert "flakeproxy: replay" in md and "**FAIL**" in md and "Replay score **40.0%**" in md
    assert "| ERROR | moved-tool | 0 |" in md and "| PASS | calm-p0 | 4 |" in md
    assert XSS not in md and XSS not in html and "&lt;script&gt;" in html
    assert 'id="replay"' in html and "unmatched: GET http://x/v2/quotes" in html and "as recorded" in html
    assert 'id="matrix"' not in html and "Cells: failures first" not in html  # no matrix ran: no empty tables
