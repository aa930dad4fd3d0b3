"""JUnit XML for CI test reports (GitLab artifacts:reports:junit, GitHub test-report actions, Jenkins):
one <testsuite> per scenario, one <testcase> per cell (classname = scenario, name = invariant id)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from flakeproxy.reports import facts, spend
from flakeproxy.reports.transcript import transcript_text
from flakeproxy.results import CellResult, RunResult

# XML 1.0 forbids most control characters even as entities; an agent's answer may hold any of them.
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def clean(text: Any) -> str:
    return _ILLEGAL.sub("\ufffd", str(text))


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _evidence(result: RunResult, cell: CellResult) -> str:
    """The verdicts' prompts, answers, reasons and evidence, and the faults that applied, as plain text."""
    answers = {e.id: e for e in facts.episodes_of(result, cell)}
    parts = []
    for v in cell.verdicts:
        episode = answers.get(v.episode)
        answer = None if episode is None else f"agent error: {episode.error}" if episode.error else episode.answer
        parts.append(
            f"episode {v.episode} (replica {v.replica}): {facts.OUTCOME_WORD[v.outcome]}: {v.reason}\n"
            f"  prompt: {v.prompt}\n  answer: {answer}\n"
            + (f"  evidence: {json.dumps(v.evidence, ensure_ascii=False, default=str)}\n" if v.evidence else "")
        )
    for fault in cell.faults_injected:
        parts.append(f"fault applied: {fault.label}: {fault.describe()}\n")
    return clean("".join(parts))


def _testcase(result: RunResult, cell: CellResult) -> ET.Element:
    case = ET.Element(
        "testcase",
        classname=clean(cell.scenario),
        name=clean(cell.invariant),
        time=_seconds(facts.cell_seconds(result, cell)),
    )
    message = clean(cell.reason)
    if cell.outcome == "fail":
        child = ET.SubElement(case, "failure", message=message, type=f"{cell.severity} {cell.type}")
        child.text = _evidence(result, cell)
    elif cell.outcome == "error":
        agent = facts.agent_error(result, cell)
        kind = "agent error" if agent else "could not judge"
        child = ET.SubElement(case, "error", message=message, type=kind)
        child.text = _evidence(result, cell)
    elif cell.outcome == "not_applicable":
        ET.SubElement(case, "skipped", message=message)
    elif cell.outcome == "inconclusive":  # neither a pass nor a failure shown: skipped, with why
        ET.SubElement(case, "skipped", message=clean(f"INCONCLUSIVE: {cell.reason}"), type="inconclusive")
    said: list[str] = []
    if cell.pass_rate is not None:  # the schema CI servers read has no properties on a testcase: say it here
        rates = facts.rate_interval(cell, "").strip()
        said.append(f"{rates}, pass@k {cell.pass_at_k}, pass^k {cell.pass_hat_k}")
    said += [t for e in facts.episodes_of(result, cell) if (t := transcript_text(e)) is not None]  # conversations
    if said:
        ET.SubElement(case, "system-out").text = clean("\n".join(said))
    return case


def _properties(result: RunResult, scenario: str) -> ET.Element:
    props = ET.Element("properties")
    cov = next((c for c in facts.coverage(result) if c.scenario == scenario), None)
    applied = sorted(
        {f"{f.label}: {f.describe()}" for e in result.episodes if e.scenario == scenario for f in e.faults()}
    )
    values: list[tuple[str, Any]] = [
        ("contract", result.contract),
        ("seed", result.seed),
        ("config_path", result.config_path),
        ("config_sha256", result.config_sha256),
        ("flakeproxy_version", result.flakeproxy_version),
        *((f"version.{name}", v) for name, v in sorted(result.versions.items())),
        ("isolation", result.isolation),
        ("complete", str(result.complete).lower()),
        ("faults_decided", cov.decided if cov else 0),
        ("faults_applied", cov.applied if cov else 0),
        ("faults_applied_detail", "; ".join(applied) or "none"),
        ("retries_seen", facts.retries_seen(result, scenario)),
    ]
    if result.interrupted_by:
        values.append(("interrupted_by", result.interrupted_by))
    for cell in facts.replicated(result):  # cell.<invariant>.pass_rate, ..._low, ..._high, pass_at_k, pass_hat_k
        if cell.scenario == scenario:
            values += [(f"cell.{cell.invariant}.{name}", v) for name, v in facts.rate_facts(cell).items()]
    values += spend.junit_properties(result, scenario)
    for name, value in values:
        ET.SubElement(props, "property", name=name, value=clean(value))
    return props


def _suite(name: str, counts: facts.Counts, seconds: float, stamp: str) -> ET.Element:
    return ET.Element(
        "testsuite",
        name=clean(name),
        tests=str(counts.tests),
        failures=str(counts.failures),
        errors=str(counts.errors),
        skipped=str(counts.skipped),
        time=_seconds(seconds),
        timestamp=clean(stamp),
    )


def _pillars(result: RunResult) -> ET.Element | None:
    """flakeproxy ci: one testcase per pillar (classname ci), as the exit code reads the run: failure when the
    pillar failed the gate (the contract failed, or a pillar with failed answers in a run that FAILed), error
    when it ran but could not be scored, skipped when it was absent or the contract is INCONCLUSIVE (as
    `contract run`'s junit says an open cell). Failed answers of a pillar in a run that passed only lower its
    score: listed in the testcase's system-out, not a failure (a trial's CI showed red on a green run)."""
    if result.ci is None:
        return None
    cases, n = [], {"failures": 0, "errors": 0, "skipped": 0}
    gate_failed = result.ci.verdict == "FAIL"
    contract_open = result.score is not None and result.score.verdict == "INCONCLUSIVE"
    for p in result.ci.pillars:
        case = ET.Element("testcase", classname="ci", name=p.name, time="0.000")
        bad = [i for i in p.items if i.outcome in ("fail", "error")]
        detail = "".join(f"{i.label} ({i.episode}): {i.outcome}: {i.reason}\n" for i in bad)
        if not p.ran:
            ET.SubElement(case, "skipped", message=clean(p.summary))
            n["skipped"] += 1
        elif p.name == "contract" and contract_open:
            ET.SubElement(case, "skipped", message=clean(f"INCONCLUSIVE: {p.summary}"))
            n["skipped"] += 1
        elif p.score is None:
            ET.SubElement(case, "error", message=clean(p.summary), type="not scored").text = clean(detail)
            n["errors"] += 1
        elif p.passed is False or (bad and gate_failed):
            message = f"{p.name} {p.score:.1f}%: {p.summary}"
            ET.SubElement(case, "failure", message=clean(message), type="pillar").text = clean(detail)
            n["failures"] += 1
        elif bad:
            counted = f"{len(bad)} answer(s) failed or could not be judged; they lower the pillar's score:\n{detail}"
            ET.SubElement(case, "system-out").text = clean(counted)
        cases.append(case)
    overall = "" if result.ci.overall is None else f"{result.ci.overall:.2f}"
    return _summary_suite("ci pillars", cases, n, result, {"overall": overall, "verdict": result.ci.verdict})


def _replays(result: RunResult) -> ET.Element | None:
    """Replayed sessions (replay run, ci's replay pillar): one testcase per session (classname replay); failure
    when it did not hold, error when it could not be judged (an unmatched request, an agent error)."""
    if result.replay is None:
        return None
    cases, n = [], {"failures": 0, "errors": 0, "skipped": 0}
    for s in result.replay.sessions:
        case = ET.Element("testcase", classname="replay", name=clean(s.session), time="0.000")
        detail = "".join(f"unmatched: {u}\n" for u in s.unmatched) + "".join(
            f"{name}: {v.outcome}: {v.reason}\n" for name, v in s.verdicts.items() if v.outcome in ("fail", "error")
        )
        if s.outcome in ("fail", "error"):
            kind = "failure" if s.outcome == "fail" else "error"
            ET.SubElement(case, kind, message=clean(s.reason), type="replay").text = clean(detail)
            n[f"{kind}s"] += 1
        elif s.outcome == "not_applicable":
            ET.SubElement(case, "skipped", message=clean(s.reason))
            n["skipped"] += 1
        ET.SubElement(case, "system-out").text = clean(f"source: {s.source}; served {s.served}, unused {s.unused}")
        cases.append(case)
    score = "" if result.replay.score is None else f"{result.replay.score:.2f}"
    return _summary_suite("replay sessions", cases, n, result, {"score": score, "verdict": result.replay.verdict})


def _summary_suite(
    name: str, cases: list[ET.Element], n: dict[str, int], result: RunResult, props: dict[str, str]
) -> ET.Element:
    """A suite of one testcase per pillar or session, with its counts and properties (the seed added)."""
    counts = facts.Counts(len(cases), n["failures"], n["errors"], n["skipped"])
    suite = _suite(name, counts, 0.0, result.started_at)
    properties = ET.SubElement(suite, "properties")
    for key, value in {**props, "seed": result.seed}.items():
        ET.SubElement(properties, "property", name=key, value=clean(value))
    suite.extend(cases)
    return suite


def render(result: RunResult) -> str:
    suites = []
    for scenario in result.scenarios:
        cells = [c for c in result.cells if c.scenario == scenario]
        if not cells:
            continue
        suite = _suite(scenario, facts.Counts.of(cells), facts.scenario_seconds(result, scenario), result.started_at)
        suite.append(_properties(result, scenario))
        suite.extend(_testcase(result, c) for c in cells)
        suites.append(suite)
    extra = [suite for suite in (_pillars(result), _replays(result)) if suite is not None]
    shard = facts.shard_note(result)
    if shard:  # a test that did not run, not a green run of none
        suite = _suite("flakeproxy shard", facts.Counts(1, 0, 0, 1), 0.0, result.started_at)
        case = ET.SubElement(suite, "testcase", classname="flakeproxy", name="judged by merge", time="0.000")
        ET.SubElement(case, "skipped", message=clean(shard))
        extra.append(suite)
    if not result.complete:
        suite = _suite("flakeproxy run", facts.Counts(1, 0, 1, 0), 0.0, result.started_at)
        case = ET.SubElement(suite, "testcase", classname="flakeproxy", name="run complete", time="0.000")
        ET.SubElement(case, "error", message=clean(facts.interruption(result)), type="interrupted")
        extra.append(suite)
    suites += extra
    count = {k: sum(int(s.get(k, "0")) for s in extra) for k in ("tests", "failures", "errors", "skipped")}
    total = facts.Counts.of(result.cells)
    root = ET.Element(
        "testsuites",
        name=clean(f"flakeproxy: {facts.title(result)}"),
        tests=str(total.tests + count["tests"]),
        failures=str(total.failures + count["failures"]),
        errors=str(total.errors + count["errors"]),
        skipped=str(total.skipped + count["skipped"]),
        time=_seconds(sum(e.latency_ms for e in result.episodes) / 1000),
    )
    root.extend(suites)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
