"""`flakeproxy ci` on a real world: the pillars that are configured run once each, the absent ones are
said and their weight spread, LLM-written mutations are cached, and a failed contract fails ci."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from flakeproxy import load_config
from flakeproxy.reports.terminal import render
from flakeproxy.results import RunResult
from flakeproxy.runner.ci import run_ci_async
from tests.runner.world import world
from tests.support.upstream import RunningUpstream

RUN_INVARIANTS = [
    {"id": "answers", "type": "completes"},
    {"id": "cites", "type": "regex", "pattern": "(?i)(source|feed|unavailable)"},
    {"id": "no-figures-when-down", "type": "regex", "pattern": r"\$\d", "negate": True, "when": "tool_faults_active"},
]


def ci_config(w: Any, **extra: Any) -> None:
    w.data.update(
        invariants=RUN_INVARIANTS,
        chaos={"tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}]},
        mutations={"count": 11},  # exactly 11: one per rule-based type
        **extra,
    )
    w.config.write_text(yaml.safe_dump(w.data))


def ci(path: Path, out: Path) -> RunResult:
    return asyncio.run(run_ci_async(load_config(path), str(path), out))


def test_three_pillars_without_a_model_and_the_arithmetic(tmp_path: Path) -> None:
    with world(tmp_path) as w:
        ci_config(w)
        result = ci(w.config, tmp_path / "out")
        calls = w.agent.invocations
    assert result.ci is not None and result.score is not None
    pillars = {p.name: p for p in result.ci.pillars}
    assert [p.name for p in result.ci.pillars] == ["contract", "mutation", "chaos", "replay"]
    assert not pillars["replay"].ran and pillars["replay"].share == 0.0
    assert "replay    absent     not configured (no replays: section)" in render(result).splitlines()
    # the spend table's last row counts every pillar's episodes, its scenario rows the matrix's (a trial's sums
    # did not add up, unsaid)
    assert any(line.startswith("whole run (and the chaos, mutation pillars)  ") for line in render(result).splitlines())
    mutation = pillars["mutation"]
    assert set(mutation.skipped) == {"paraphrase", "tone_shift", "semantic_similarity_attack", "advanced_jailbreak"}
    assert all("no model: endpoint" in why for why in mutation.skipped.values())
    assert len(mutation.items) == 11 and set(mutation.by_type) == {i.label for i in mutation.items}
    # the contract matrix ran once: 3 scenarios x 1 prompt; plus 11 mutations (multi_turn_attack: 3 turns, each
    # an invocation) and 1 chaos answer
    assert calls == 3 + 10 + 3 + 1 == result.agent_invocations
    contract, chaos = pillars["contract"].score, pillars["chaos"].score
    assert contract == result.score.resilience and chaos == 100.0 and mutation.score is not None
    by_hand = (contract * 0.35 + mutation.score * 0.20 + chaos * 0.35) / (0.35 + 0.20 + 0.35)
    assert result.ci.overall == pytest.approx(by_hand, abs=0.01)
    assert pillars["contract"].share == pytest.approx(0.35 / 0.9, abs=1e-3)
    assert result.ci.redistribution is not None and result.ci.redistribution.startswith("replay absent: 0.1")
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["ci"]["overall"] == result.ci.overall and (tmp_path / "out" / "mutations.json").exists()


def test_llm_written_mutations_are_generated_once_and_cached(tmp_path: Path) -> None:
    with RunningUpstream() as model, world(tmp_path) as w:
        ci_config(w, model={"base_url": f"{model.url}/v1", "model": "mutator"})
        w.data["mutations"] = {"count": 2, "types": ["paraphrase", "tone_shift"]}
        w.data.pop("chaos")
        w.data.pop("contract")
        w.data.pop("chaos_matrix")
        w.config.write_text(yaml.safe_dump(w.data))
        first = ci(w.config, tmp_path / "out")
        generated = model.count("/v1/chat/completions")
        again = ci(w.config, tmp_path / "out")
        regenerated = model.count("/v1/chat/completions") - generated
    assert generated == 2 and regenerated == 0  # one per type (count 2 over 2 types), then the cache
    assert first.ci is not None and again.ci is not None
    texts = [e.prompt for e in first.episodes]
    assert texts == [e.prompt for e in again.episodes] and all(t != "What is AAPL trading at?" for t in texts)
    pillars = {p.name: p for p in first.ci.pillars}
    assert pillars["mutation"].ran and not pillars["mutation"].skipped
    assert not pillars["contract"].ran and not pillars["chaos"].ran
    assert "contract, chaos, replay absent" in (first.ci.redistribution or "")
    assert first.ci.overall == pillars["mutation"].score and pillars["mutation"].share == 1.0


@pytest.mark.proxy_child  # ci, end to end
def test_a_critical_contract_failure_fails_ci_above_the_minimum(tmp_path: Path) -> None:
    with world(tmp_path, "naive") as w:
        ci_config(w)
        out = subprocess.run(
            [sys.executable, "-m", "flakeproxy", "ci", "-c", str(w.config), "--min-score", "5", "-q"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert out.returncode == 1, out.stdout + out.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["ci"]["overall"] > 5 and data["ci"]["verdict"] == "FAIL"
    assert "the contract failed (see its reasons)" in data["ci"]["reasons"]
    lines = out.stdout.splitlines()
    assert any(line.startswith("contract ") for line in lines) and any(line.startswith("overall ") for line in lines)
    assert "  - the contract failed (see its reasons)" in lines


def test_ci_with_nothing_to_run_is_a_config_error(tmp_path: Path) -> None:
    with world(tmp_path) as w:
        for key in ("contract", "chaos_matrix"):
            w.data.pop(key)
        w.config.write_text(yaml.safe_dump(w.data))
        out = subprocess.run(
            [sys.executable, "-m", "flakeproxy", "ci", "-c", str(w.config)], capture_output=True, text=True, timeout=60
        )
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "nothing for ci to run" in out.stderr
