"""A Node agent on the official `openai` npm package, as `agent.type: command`, behind the real proxy and
the example's fake OpenAI-compatible LLM (streamed SSE with tool calls).

It has no reset_command, so the run adds one calm stateful check; with run.attribution: header and the
agent forwarding FLAKEPROXY_CELL as x-flakeproxy-cell, episodes run 2 at a time and every request is
still attributed to its own episode."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.frameworks.node import node_agent, proxy_section, world
from tests.frameworks.support import Run, example_config, flakeproxy, read_results

PROMPTS = ["What is AAPL trading at?", "AAPL price?"]


def node_config(script: Path, upstream: str, forward_cell: bool, scenarios: list[str]) -> dict[str, Any]:
    config = example_config()
    config["proxy"], env = proxy_section(upstream)
    env.update({"AGENT_STREAM": "1", "FORWARD_CELL": "1" if forward_cell else "0"})
    config["agent"] = {"type": "command", "command": ["node", str(script)], "env": env, "timeout_ms": 20000}
    config["targets"]["news_api"] = {"listener": "tools", "path": "/v1/news*", "method": "GET"}
    config["golden_prompts"] = PROMPTS
    matrix = [
        *config["chaos_matrix"],
        {"name": "news-down", "tool_faults": [{"tool": "news_api", "mode": "error", "error_code": 503}]},
    ]
    config["chaos_matrix"] = [s for s in matrix if s["name"] in scenarios]
    config["run"] = {"seed": 7, "concurrency": 2, "attribution": "header"}
    return config


def run_node(tmp_path: Path, forward_cell: bool, scenarios: list[str]) -> Run:
    script = node_agent()
    with world() as upstream:
        path = tmp_path / "flakeproxy.yaml"
        path.write_text(yaml.safe_dump(node_config(script, upstream, forward_cell, scenarios), sort_keys=False))
        validate = flakeproxy("contract", "validate", "-c", str(path))
        assert validate.returncode == 0, validate.stderr
        # scenarios x prompts, and the calm stateful check (no reset_command)
        invocations = len(scenarios) * len(PROMPTS) + 1
        assert validate.stdout.strip().endswith(
            f"; {invocations} agent invocations (1 of them outside the matrix: the agent has no reset, so its first "
            "prompt runs calm to tell whether it keeps state between episodes)"
        ), validate.stdout
        out = flakeproxy("contract", "run", "-c", str(path), "-o", str(tmp_path / "out"))
    return read_results(out, tmp_path / "out", path)


@pytest.mark.skipif(sys.platform == "win32", reason="the agent runs under a POSIX shell environment")
@pytest.mark.timeout(150)
def test_node_openai_agent_verdicts_and_attribution(tmp_path: Path) -> None:
    scenarios = ["no-chaos", "quote-tool-down", "llm-rate-limited", "llm-stream-cut", "news-down"]
    run = run_node(tmp_path, forward_cell=True, scenarios=scenarios)
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    assert run.results["agent_invocations"] == 11 == len(run.results["episodes"])
    assert run.results["unattributed_requests"] == 0
    assert "concurrency" not in run.stderr  # honoured, no warning: the agent forwards the header

    # every episode's journal holds exactly its own three or four calls, each tagged with its cell
    for episode in run.results["episodes"]:
        cells = {j["episode"] for j in episode["journal"]}
        assert len(cells) == 1 and len(episode["journal"]) >= 2, episode["journal"]

    for episode in run.episodes("quote-tool-down"):
        quotes = [j for j in episode["journal"] if "/v1/quotes" in j["url"]]
        assert [(j["status"], j["fault"]["applied"]) for j in quotes] == [(503, True)]
        assert "unavailable" in episode["answer"] and "$" not in episode["answer"]
    assert run.cell("never-fabricate", "quote-tool-down")["outcome"] == "pass"

    # openai-node waited out Retry-After: 1 in each episode before its retry
    waits = run.cell("waits-retry-after", "llm-rate-limited")
    assert waits["outcome"] == "pass"
    assert [v["outcome"] for v in waits["verdicts"]] == ["pass", "pass"]
    assert all(v["evidence"]["waited_ms"][0] >= 900 for v in waits["verdicts"]), waits["verdicts"]

    # the streamed answers were cut after 2 events: the tool call's name arrived, the answer did not
    assert run.coverage("llm-stream-cut")["applied"] == run.coverage("llm-stream-cut")["decided"] == 4
    assert [e["answer"] for e in run.episodes("llm-stream-cut")] == ["AAPL", "AAPL"]
    assert run.cell("cite-source", "llm-stream-cut")["outcome"] == "fail"

    never = run.cell("never-fabricate", "news-down")
    assert never["outcome"] == "error" and "injected nothing" in never["reason"]
    assert run.coverage("news-down")["applied"] == 0

    calm = [e for e in run.results["episodes"] if e["scenario"] is None]
    assert len(calm) == 1 and calm[0]["answer"].startswith("AAPL trades at $189.50")
    json.dumps(run.results)  # results.json is plain JSON all the way down


@pytest.mark.timeout(150)
def test_node_agent_without_the_header_makes_traffic_checks_error(tmp_path: Path) -> None:
    run = run_node(tmp_path, forward_cell=False, scenarios=["no-chaos", "quote-tool-down"])
    assert run.results["unattributed_requests"] > 0
    # docs/concepts.md: a request no episode can own "makes the traffic checks of the episodes concerned ERROR"
    cell = run.cell("few-retries", "quote-tool-down")
    assert cell["outcome"] == "error" and "could not be attributed" in cell["reason"], cell
    # An unattributed request gets no fault (no episode, so no scenario): whether the scenario's faults applied
    # depends on whether one of its tool calls came while its episode was the only one open. Either way the run
    # says what it saw: applied, or unknown because of the unattributed requests; never "check targets".
    [down] = [c for c in run.results["coverage"] if c["scenario"] == "quote-tool-down"]
    warnings = run.results["warnings"]
    if down["applied"] == 0:
        assert down["unattributed"] > 0, down
        unknown = "scenario quote-tool-down: its episodes' requests could not be attributed"
        assert any(unknown in w and "is unknown" in w for w in warnings), warnings
    assert not any("check targets" in w for w in warnings), warnings
    assert len(run.results["unattributed_journal"]) == run.results["unattributed_requests"]
    assert sum("could not be attributed to an episode" in w for w in warnings) == 1
