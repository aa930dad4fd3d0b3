"""junit.xml validates against the JUnit schema CI servers read and round-trips through junitparser with
the run's counts; failures carry the reason and the evidence."""

from __future__ import annotations

from pathlib import Path

import junitparser
import pytest
import xmlschema

from flakeproxy.reports import write
from flakeproxy.reports.facts import Counts
from flakeproxy.results import RunResult
from tests.reports.conftest import AGENTS, interrupted

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))


def _junit(result: RunResult, tmp_path: Path) -> Path:
    [path] = write(result, tmp_path, ["junit"])
    SCHEMA.validate(path)  # raises with the offending element
    return path


@pytest.mark.parametrize("agent", AGENTS)
def test_junit_validates_and_round_trips(agent: str, demo: dict[str, RunResult], tmp_path: Path) -> None:
    result = demo[agent]
    xml = junitparser.JUnitXml.fromfile(str(_junit(result, tmp_path)))
    counts = Counts.of(result.cells)
    assert (xml.tests, xml.failures, xml.errors, xml.skipped) == (
        counts.tests,
        counts.failures,
        counts.errors,
        counts.skipped,
    )
    suites = list(xml)
    assert [s.name for s in suites] == result.scenarios
    for suite in suites:
        props = {p.name: p.value for p in suite.properties()}
        assert props["seed"] == str(result.seed) and props["config_sha256"] == result.config_sha256
        assert props["version.python"] == result.versions["python"]
        for case in suite:
            cell = result.cell(case.name, suite.name)
            assert case.classname == cell.scenario
            kinds = [type(r).__name__ for r in case.result]
            assert (
                kinds
                == {"pass": [], "fail": ["Failure"], "error": ["Error"], "not_applicable": ["Skipped"]}[cell.outcome]
            )
            if cell.outcome == "fail":
                assert case.result[0].message == cell.reason
                answer = result.episode(cell.episodes[0]).answer
                assert answer is not None and answer in case.result[0].text
            if cell.outcome != "not_applicable":
                seconds = sum(result.episode(e).latency_ms for e in cell.episodes) / 1000
                assert case.time == pytest.approx(seconds, abs=1e-3)
    if agent == "naive":
        down = next(s for s in suites if s.name == "tool-down")
        props = {p.name: p.value for p in down.properties()}
        assert props["faults_applied"] == "6" and "replied 503" in props["faults_applied_detail"]  # it loops: 6 calls
        rate = next(s for s in suites if s.name == "llm-rate-limited")
        assert int({p.name: p.value for p in rate.properties()}["retries_seen"]) >= 1


def test_junit_of_an_interrupted_run_errors_the_run(demo: dict[str, RunResult], tmp_path: Path) -> None:
    result = interrupted(demo["naive"])
    xml = junitparser.JUnitXml.fromfile(str(_junit(result, tmp_path)))
    assert [s.name for s in xml] == [*result.scenarios[:2], "flakeproxy run"]
    run = list(xml)[-1]
    [case] = list(run)
    assert case.name == "run complete" and "interrupted" in case.result[0].message
    assert xml.errors == 1 and xml.tests == len(result.cells) + 1


def test_agent_errors_and_control_characters(demo: dict[str, RunResult], tmp_path: Path) -> None:
    """An errored cell is <error type="agent error">; characters XML 1.0 cannot hold are replaced."""
    result = demo["naive"].model_copy(deep=True)
    cell = result.cell("always-cite-source", "tool-down")
    cell.outcome, cell.reason = "error", "agent error: \x00\x1b[31mboom"
    result.episode(cell.episodes[0]).error = "HTTP 500 from the agent \x07"
    xml = junitparser.JUnitXml.fromfile(str(_junit(result, tmp_path)))
    case = next(c for s in xml if s.name == "tool-down" for c in s if c.name == "always-cite-source")
    [err] = case.result
    assert isinstance(err, junitparser.Error) and err.type == "agent error"
    assert err.message == "agent error: \ufffd\ufffd[31mboom" and "HTTP 500 from the agent" in err.text
