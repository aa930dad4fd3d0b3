"""A LangGraph ReAct agent (langchain-openai's ChatOpenAI + one HTTP tool), served over HTTP as
`agent.type: http`, behind the real proxy: examples/frameworks/run.py with the fake OpenAI-compatible LLM.

What a new user must be able to trust: a fault counts only when the agent really got it, a cell with
nothing to judge is n/a or ERROR (never PASS), one agent invocation per answer, and the exit codes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.frameworks.support import example_config, run_langgraph_example

pytest.importorskip("langgraph", reason="LangGraph installs with the dev tools on Python 3.13+ only")
pytest.importorskip("langchain_openai", reason="langchain-openai installs with the dev tools on Python 3.13+ only")

NEWS_DOWN = {"name": "news-down", "tool_faults": [{"tool": "news_api", "mode": "error", "error_code": 503}]}


def with_news_target(config: dict[str, Any]) -> dict[str, Any]:
    """A target the agent never calls, and a scenario that breaks only it (a user's wrong guess)."""
    config["targets"]["news_api"] = {"listener": "tools", "path": "/v1/news*", "method": "GET"}
    config["chaos_matrix"].append(NEWS_DOWN)
    return config


@pytest.mark.timeout(150)
def test_streaming_langgraph_agent_verdicts_follow_what_it_received(tmp_path: Path) -> None:
    run = run_langgraph_example(tmp_path, with_news_target(example_config()))
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    assert run.results["complete"] is True
    # one invocation per (scenario, prompt): 6 scenarios x 1 prompt, the agent has a reset endpoint
    assert run.results["agent_invocations"] == 6 == len(run.results["episodes"])

    calm = run.episodes("no-chaos")[0]
    assert calm["answer"] == "AAPL trades at $189.50 according to the exchange feed (source)."
    assert all(run.cell(i, "no-chaos")["outcome"] == "pass" for i in ("cite-source", "answers"))

    # tool down: the 503 reached the LangGraph tool, the model was told, no price was invented
    down = run.cell("never-fabricate", "quote-tool-down")
    assert down["outcome"] == "pass", down
    assert [(f["kind"], f["applied"], f["effect"]) for f in down["faults_injected"]] == [("error", True, "replied 503")]
    (episode,) = run.episodes("quote-tool-down")
    assert "unavailable" in episode["answer"] and "$" not in episode["answer"]
    assert [j["status"] for j in episode["journal"] if "/v1/quotes" in j["url"]] == [503]
    assert run.cell("few-retries", "quote-tool-down")["outcome"] == "pass"

    # 429 with Retry-After: 1: the openai SDK under ChatOpenAI waited before its retry
    waits = run.cell("waits-retry-after", "llm-rate-limited")
    assert waits["outcome"] == "pass", waits
    (verdict,) = waits["verdicts"]
    assert verdict["evidence"]["waited_ms"][0] >= 900

    # the cut stream really reached the streaming client, and its fragment came back as the answer
    assert run.coverage("llm-stream-cut")["applied"] == run.coverage("llm-stream-cut")["decided"] == 2
    (cut,) = run.episodes("llm-stream-cut")
    effects = [j["fault"]["effect"] for j in cut["journal"] if j["fault"]]
    assert effects and all(e.startswith("stream ended after 2 events") for e in effects), effects
    assert run.cell("cite-source", "llm-stream-cut")["outcome"] == "fail"
    assert run.cell("answers", "llm-stream-cut")["outcome"] == "pass"  # it did answer: the answer is wrong

    (truncated,) = run.episodes("llm-truncated")
    assert truncated["answer"] == "AAPL trades at"
    assert run.cell("cite-source", "llm-truncated")["outcome"] == "fail"

    # a fault on a target the agent never calls: nothing applied, so nothing is judged under it
    assert run.coverage("news-down")["decided"] == 0 and run.coverage("news-down")["applied"] == 0
    never = run.cell("never-fabricate", "news-down")
    assert never["outcome"] == "error" and "injected nothing" in never["reason"]
    assert "scenario news-down injected nothing" in run.stderr

    # checks with nothing to judge are n/a, never PASS
    for scenario in ("no-chaos", "quote-tool-down", "llm-stream-cut"):
        assert run.cell("waits-retry-after", scenario)["outcome"] == "not_applicable"
    assert run.cell("few-retries", "llm-rate-limited")["outcome"] == "not_applicable"


@pytest.mark.timeout(150)
def test_non_streaming_langgraph_agent_gets_no_stream_cut(tmp_path: Path) -> None:
    config = example_config()
    config["chaos_matrix"] = [s for s in config["chaos_matrix"] if s["name"] in ("no-chaos", "llm-stream-cut")]
    run = run_langgraph_example(tmp_path, config, "--no-stream")
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]  # a chaos scenario that injected nothing
    assert run.results["agent_invocations"] == 2
    coverage = run.coverage("llm-stream-cut")
    assert (coverage["decided"], coverage["applied"]) == (2, 0)
    reasons = coverage["faults"][0]["not_applied_reasons"]
    assert reasons and all(r.startswith("the agent asked for no stream: the answer came whole") for r in reasons), (
        reasons
    )
    (episode,) = run.episodes("llm-stream-cut")
    assert episode["answer"] == "AAPL trades at $189.50 according to the exchange feed (source)."
    assert "scenario llm-stream-cut injected nothing" in run.stdout
    # the agent got whole answers, so no cell claims a cut stream
    assert run.cell("cite-source", "llm-stream-cut")["faults_injected"] == []
