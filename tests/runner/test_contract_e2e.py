"""A contract run end to end: the runner starts the proxy, drives a real agent whose tool and LLM calls
go through it, judges, scores, writes results.json and exits as DESIGN.md says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flakeproxy.results import RunResult
from tests.runner.world import cli, journal, run, world


def outcomes(result: RunResult) -> dict[tuple[str, str], str]:
    return {(c.invariant, c.scenario): c.outcome for c in result.cells}


def test_careful_agent_passes_with_the_tool_down(tmp_path: Path) -> None:
    with world(tmp_path, "careful") as w:
        result = run(w.config)
    cells = outcomes(result)
    assert cells[("never-fabricate-when-tools-fail", "search-tool-down")] == "pass"
    assert cells[("never-fabricate-when-tools-fail", "no-chaos")] == "not_applicable"
    assert cells[("always-cite-source", "search-tool-down")] == "pass"
    assert result.score is not None and result.score.verdict == "PASS"
    down = next(c for c in result.cells if c.scenario == "search-tool-down" and c.invariant == "always-cite-source")
    assert [f.kind for f in down.faults_injected] == ["error"]  # the fault really reached the agent's call
    assert [e["status"] for e in journal(result, down)] == [503]


@pytest.mark.proxy_child  # contract run, end to end
def test_naive_agent_fails_the_critical_invariant_and_exits_1(tmp_path: Path) -> None:
    with world(tmp_path, "naive") as w:
        out = cli(w.config)
    assert out.returncode == 1, out.stderr
    assert "FAIL  never-fabricate-when-tools-fail in search-tool-down [critical]: negated: matches" in out.stdout
    assert "resilience score" in out.stdout and out.stdout.rstrip().splitlines()[-1].startswith("reproduce:")
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["schema_version"] == "4" and data["seed"] == 7 and data["complete"]
    assert data["score"]["verdict"] == "FAIL" and len(data["config_sha256"]) == 64
    failed = [c for c in data["cells"] if c["outcome"] == "fail"]
    assert [(c["invariant"], c["scenario"]) for c in failed] == [
        ("never-fabricate-when-tools-fail", "search-tool-down")
    ]
    [episode] = [e for e in data["episodes"] if e["id"] == failed[0]["episodes"][0]]
    assert episode["answer"] == "AAPL trades at $187.23 according to my sources."
    assert "[1/3]" in out.stderr and "[3/3]" in out.stderr  # progress: one line per episode


@pytest.mark.proxy_child  # contract score, end to end
def test_contract_score_prints_the_number_alone(tmp_path: Path) -> None:
    with world(tmp_path, "careful") as w:
        out = cli(w.config, command="score")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "100.0\n"


def test_python_equivalent(tmp_path: Path) -> None:
    import flakeproxy

    with world(tmp_path, "careful") as w:
        result = flakeproxy.run_contract(str(w.config), str(tmp_path / "api-out"))
    assert result.score is not None and result.score.verdict == "PASS"
    assert (tmp_path / "api-out" / "results.json").exists()
