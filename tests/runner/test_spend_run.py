"""Issue 25 in a contract run: each episode's and scenario's spend in results.json, read from the usage the fake
LLM reported through the real proxy, and run.budget stopping a run early with its partial results (exit 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.runner.world import cli, run, world
from tests.support.fake_usage import completion_tokens, prompt_tokens

MATRIX = [
    {"name": "no-chaos"},
    {"name": "search-tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}]},
    {"name": "llm-limited", "llm_faults": [{"mode": "rate_limit", "retry_after_s": 0}]},
]
INVARIANTS = [
    {"id": "tokens", "type": "amplification", "max_factor": 2, "severity": "high"},
    {"id": "calls", "type": "amplification", "max_factor": 2, "measure": "llm_calls", "severity": "high"},
    {"id": "cost", "type": "cost_budget", "max_usd": 0.01, "severity": "high"},
]


PRICING = {
    "as_of": "2026-11-20",
    "defaults": False,
    "models": {"m*": {"input_usd_per_mtok": 1, "output_usd_per_mtok": 2}},
}


def test_each_episode_and_scenario_says_what_it_spent(tmp_path: Path) -> None:
    with world(tmp_path, "careful", invariants=INVARIANTS, matrix=MATRIX, run={"replicas": 2}) as w:
        w.config.write_text(yaml.safe_dump({**w.data, "pricing": PRICING}, sort_keys=False))
        result = run(w.config)
        sent = [json.loads(seen.body) for seen in w.upstream.requests if seen.path == "/v1/chat/completions"]
    calm = [e for e in result.episodes if e.scenario == "no-chaos"]
    assert len(sent) == 2 and [e.spend.llm_calls for e in calm if e.spend] == [1, 1]
    for episode, body in zip(calm, sent, strict=True):
        assert episode.spend is not None and episode.spend.exact
        assert (episode.spend.input_tokens, episode.spend.output_tokens) == (
            prompt_tokens(body),
            completion_tokens(body),
        )
        assert episode.spend.tool_calls == {"market_data_api": 1}
        assert episode.spend.cost_usd == pytest.approx(
            (prompt_tokens(body) + completion_tokens(body) * 2) / 1e6, rel=1e-12
        )
    by = {s.scenario: s for s in result.spend}
    assert by["no-chaos"].calm and by["no-chaos"].amplification["tokens"] == 1.0
    assert by["no-chaos"].total.input_tokens == sum(prompt_tokens(b) for b in sent)
    assert by["search-tool-down"].total.llm_calls == 0 and by["search-tool-down"].amplification["llm_calls"] == 0.0
    limited = by["llm-limited"]  # the proxy answered 429 itself: a call, not billed (known 0 tokens)
    assert (limited.total.llm_calls, limited.total.total_tokens, limited.total.unknown_calls) == (2, 0, 0)
    assert limited.amplification == {"tokens": 0.0, "llm_calls": 1.0, "tool_calls": 1.0, "cost": 0.0}
    assert result.pricing_as_of == "2026-11-20"
    cells = {(c.invariant, c.scenario): c.outcome for c in result.cells}
    assert cells[("tokens", "no-chaos")] == "pass" and cells[("calls", "search-tool-down")] == "pass"
    assert cells[("cost", "no-chaos")] == "pass" and cells[("cost", "search-tool-down")] == "not_applicable"


@pytest.mark.proxy_child  # contract run, end to end
def test_a_run_budget_of_10_llm_calls_stops_a_40_episode_run_with_exit_5(tmp_path: Path) -> None:
    budget = {"replicas": 40, "budget": {"llm_calls": 10}}
    with world(tmp_path, "careful", matrix=MATRIX[:1], run=budget) as w:
        out = cli(w.config)
        calls = w.upstream.count("/v1/chat/completions")
    assert out.returncode == 5, out.stderr
    assert "the run budget was crossed (run.budget.llm_calls: 11 LLM calls, more than 10)" in out.stderr
    assert "[11/40] no-chaos" in out.stderr and "[12/40]" not in out.stderr
    assert "; run so far: 11 LLM calls, " in out.stderr  # progress lines show the run's spend so far
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert not data["complete"] and len(data["episodes"]) == 11 == calls
    assert data["budget_crossed"] == "run.budget.llm_calls: 11 LLM calls, more than 10"
    assert data["spend"][0]["total"]["llm_calls"] == 11
    assert (tmp_path / "out" / "junit.xml").exists() and (tmp_path / "out" / "report.html").exists()
    # as a finished run does: the matrix so far on stdout, the files written, then the error line
    assert out.stdout.startswith("contract ") and "no-chaos" in out.stdout.splitlines()[2], out.stdout
    reports = ("results.json", "junit.xml", "report.html", "summary.md")
    assert out.stderr.strip().splitlines()[-2] == "wrote " + ", ".join(str(tmp_path / "out" / f) for f in reports)


def test_a_run_stopped_by_its_budget_keeps_its_coverage_and_its_whole_spend(tmp_path: Path) -> None:
    """What applied before the stop is in results.json (the chaos scenario is not shown as calm), and the whole
    run's spend is what the budget counted, calm baseline episodes included."""
    matrix = [MATRIX[2]]  # the proxy answers 429 to the LLM: no calm scenario, so amplification plans baselines
    invariants = [{"id": "tokens", "type": "amplification", "max_factor": 2, "severity": "high"}]
    budget = {"replicas": 3, "budget": {"llm_calls": 4}}  # 3 calm baselines (1 call each), then the 429s
    with world(tmp_path, "careful", invariants=invariants, matrix=matrix, run=budget) as w:
        out = cli(w.config)
    assert out.returncode == 5, out.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    crossed = int(data["budget_crossed"].split(": ")[1].split()[0])
    assert data["spend_total"]["llm_calls"] == crossed > 4
    assert sum(row["total"]["llm_calls"] for row in data["spend"]) < crossed  # the baselines are in no row
    [limited] = data["coverage"]
    assert limited["scenario"] == "llm-limited" and limited["applied"] >= 1, limited
    terminal = (tmp_path / "out" / "summary.md").read_text()
    assert "| whole run |" in terminal
