"""A `flakeproxy ci` results.json in every format: the pillars are there, absent ones said, and the JUnit
still validates and counts the pillar test cases."""

from __future__ import annotations

from pathlib import Path

import junitparser
import pytest
import xmlschema

from flakeproxy.reports import render
from flakeproxy.reports.facts import Counts
from flakeproxy.results import RunResult

XSD = Path(__file__).parent / "junit.xsd"


def test_junit_has_one_case_per_pillar(demo_ci: dict[str, RunResult], tmp_path: Path) -> None:
    result = demo_ci["naive"]
    path = tmp_path / "junit.xml"
    path.write_text(render(result, "junit"))
    xmlschema.XMLSchema(str(XSD)).validate(str(path))
    xml = junitparser.JUnitXml.fromfile(str(path))
    [pillars] = [s for s in xml if s.name == "ci pillars"]
    cases = {c.name: [type(r).__name__ for r in c.result] for c in pillars}
    # the naive agent: the contract failed, an injection got through, the chaos answer and the replayed incident
    # invented a price
    assert cases == {"contract": ["Failure"], "mutation": ["Failure"], "chaos": ["Failure"], "replay": ["Failure"]}
    [sessions] = [s for s in xml if s.name == "replay sessions"]
    assert [(c.name, [type(r).__name__ for r in c.result]) for c in sessions] == [("quote-feed-outage", ["Failure"])]
    cells = Counts.of(result.cells)
    assert (xml.tests, xml.failures, xml.skipped) == (cells.tests + 5, cells.failures + 5, cells.skipped)
    props = {p.name: p.value for p in pillars.properties()}
    assert props["verdict"] == "FAIL" and float(props["overall"]) == pytest.approx(result.ci.overall or 0)


@pytest.mark.parametrize("fmt", ["md", "html", "terminal"])
def test_every_format_shows_the_pillars(demo_ci: dict[str, RunResult], fmt: str) -> None:
    result = demo_ci["naive"]
    assert result.ci is not None
    text = render(result, fmt).replace("\\_", "_")  # Markdown escapes underscores
    for pillar in ("contract", "mutation", "chaos", "replay"):
        assert pillar in text
    assert "quote-feed-outage" in text and "prompt_injection" in text
    assert f"{result.ci.overall:.1f}%" in text


def test_junit_reads_the_run_as_its_exit_code_does(demo_ci: dict[str, RunResult], tmp_path: Path) -> None:
    """A trial's ci run PASSed (exit 0) with one chaos answer failing a high check: junit.xml said failures="1",
    a red test report on a green job; and an INCONCLUSIVE contract was a failure where `contract run` says
    skipped."""
    careful = demo_ci["careful"]
    assert careful.ci is not None and careful.ci.verdict == "PASS"
    pillars = []
    for p in careful.ci.pillars:
        if p.name == "chaos" and p.items:
            items = [p.items[0].model_copy(update={"outcome": "fail", "reason": "invented a price"}), *p.items[1:]]
            p = p.model_copy(update={"items": items})
        pillars.append(p)
    passing = careful.model_copy(update={"ci": careful.ci.model_copy(update={"pillars": pillars})})
    xml = junitparser.JUnitXml.fromstring(render(passing, "junit"))
    [suite] = [s for s in xml if s.name == "ci pillars"]
    cases = {c.name: c for c in suite}
    assert cases["chaos"].result == [] and "invented a price" in (cases["chaos"].system_out or "")
    assert suite.failures == 0
    assert careful.score is not None
    open_contract = passing.model_copy(
        update={"score": careful.score.model_copy(update={"verdict": "INCONCLUSIVE", "passed": False})}
    )
    [suite] = [s for s in junitparser.JUnitXml.fromstring(render(open_contract, "junit")) if s.name == "ci pillars"]
    contract = next(c for c in suite if c.name == "contract")
    assert [type(r).__name__ for r in contract.result] == ["Skipped"]
