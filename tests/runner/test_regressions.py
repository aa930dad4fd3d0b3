"""What the nearest existing tool (Flakestorm 2.0.0) gets wrong, per DESIGN.md: one test each, run for real."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from tests.conftest import REPO
from tests.runner.world import MATRIX, answers, cli, journal, run, world


def test_tool_faults_reach_the_agents_own_tool_calls(tmp_path: Path) -> None:
    """Flakestorm faked a failure of the agent's whole endpoint; here the agent's call to its tool gets the 503."""
    with world(tmp_path, matrix=[MATRIX[1]]) as w:
        result = run(w.config)
        quote_calls = w.upstream.count("/v1/quotes")
    cell = result.cells[0]
    assert [(e["targets"], e["status"], e["upstream_called"]) for e in journal(result, cell)] == [
        (["market_data_api"], 503, False)
    ]
    assert quote_calls == 0  # the fault answered for the tool API
    [answer] = answers(result, cell)
    assert answer is not None and "unavailable" in answer  # the agent itself answered


def test_when_is_honoured(tmp_path: Path) -> None:
    with world(tmp_path) as w:
        result = run(w.config)
    assert {c.scenario: c.outcome for c in result.cells if c.invariant == "never-fabricate-when-tools-fail"} == {
        "no-chaos": "not_applicable",
        "search-tool-down": "pass",
        "llm-degraded": "not_applicable",
    }


def test_contract_run_exits_1_on_fail(tmp_path: Path) -> None:
    with world(tmp_path, "naive") as w:
        assert cli(w.config).returncode == 1


def test_an_empty_matrix_is_an_error_not_100_percent(tmp_path: Path) -> None:
    with world(tmp_path) as w:
        w.data["chaos_matrix"] = []
        w.config.write_text(json.dumps(w.data))
        out = cli(w.config)
    assert out.returncode == 2 and "chaos_matrix: must have at least 1 item" in out.stderr
    only_tool = [{"id": "x", "type": "latency", "max_ms": 1000, "when": "tool_faults_active"}]
    with world(tmp_path / "b", invariants=only_tool, matrix=[{"name": "calm"}]) as w:
        out = cli(w.config)
    assert out.returncode == 2 and "nothing would be judged" in out.stderr


def test_request_template_is_json_escaped(tmp_path: Path) -> None:
    prompt = 'Say "hi"\nand \\ then {prompt} ✓'
    with world(tmp_path, matrix=[{"name": "calm"}]) as w:
        w.data["golden_prompts"] = [prompt]
        w.config.write_text(json.dumps(w.data))
        result = run(w.config)
        assert w.agent.prompts[-1] == prompt
    assert result.episodes[0].error is None


def test_error_null_in_a_reply_is_not_an_error(tmp_path: Path) -> None:
    """The test agent answers {"reply": ..., "error": null}."""
    with world(tmp_path, matrix=[{"name": "calm"}]) as w:
        result = run(w.config)
    assert all(e.error is None and e.answer for e in result.episodes)


def test_the_seed_is_honoured(tmp_path: Path) -> None:
    flaky = [{"name": "flaky", "tool_faults": [{"tool": "market_data_api", "mode": "error", "probability": 0.5}]}]
    invariants = [{"id": f"i{n}", "type": "latency", "max_ms": 60000} for n in range(8)]

    def faults(seed: int, sub: str) -> list[int]:
        with world(tmp_path / sub, invariants=invariants, matrix=flaky, run={"seed": seed}) as w:
            result = run(w.config)
        assert result.seed == seed
        return [len(c.faults_injected) for c in result.cells]

    first, again, other = faults(7, "a"), faults(7, "b"), faults(8, "c")
    assert first == again and first != other


def test_similarity_needs_no_download() -> None:
    """The similarity judge imports the standard library only: nothing to fetch at run time."""
    tree = ast.parse((REPO / "flakeproxy" / "judging" / "detectors" / "similarity.py").read_text())
    imported = {n.names[0].name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", "math", "re", "collections"}


def test_unknown_fault_modes_fail_validation(tmp_path: Path) -> None:
    with world(tmp_path) as w:
        w.config.write_text(w.config.read_text().replace("mode: truncated_response", "mode: explode"))
        out = cli(w.config)
    assert out.returncode == 2 and "unknown mode 'explode'" in out.stderr


# Also covered elsewhere: SSE answers assembled (test_agents.py), concurrency honoured (test_cells.py),
# PII beyond five regexes with checksums (tests/judges/test_pii.py).
