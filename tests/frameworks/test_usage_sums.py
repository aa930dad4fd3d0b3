"""Issue 25's acceptance for real agents: a LangGraph agent (ChatOpenAI, streamed, stream_usage) and a Node agent on
the official `openai` npm package (streamed with include_usage) run behind the real proxy; each episode's token
sums in results.json equal what the fake provider reported for that episode's calls (its `x-reported-usage`
header, which the journal keeps beside the body the usage was read from)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.frameworks.node import node_agent, proxy_section, world
from tests.frameworks.support import Run, example_config, flakeproxy, read_results, run_langgraph_example

SCENARIOS = ("no-chaos", "quote-tool-down", "llm-rate-limited")


def reported(entry: dict[str, Any]) -> tuple[int, int]:
    """What the fake provider said this call used (0, 0 for a reply it never made: the proxy's 429)."""
    headers = {k.lower(): v for k, v in entry["response_headers"].items()}
    if "x-reported-usage" not in headers:
        assert not entry["upstream_called"], entry
        return 0, 0
    given, made = headers["x-reported-usage"].split(",")
    return int(given), int(made)


def check_sums(run: Run) -> None:
    episodes = run.results["episodes"]
    assert {e["scenario"] for e in episodes} >= set(SCENARIOS)
    for episode in episodes:
        llm = [e for e in episode["journal"] if e["targets"] == ["llm"]]
        spend = episode["spend"]
        assert llm and spend["llm_calls"] == len(llm) and spend["unknown_calls"] == 0, episode["id"]
        given = sum(reported(e)[0] for e in llm)
        made = sum(reported(e)[1] for e in llm)
        assert (spend["input_tokens"], spend["output_tokens"]) == (given, made), episode["id"]
        assert spend["tool_calls"] == ({"quote_api": 1} if episode["scenario"] else spend["tool_calls"])
    limited = next(e for e in episodes if e["scenario"] == "llm-rate-limited")["spend"]
    calm = next(e for e in episodes if e["scenario"] == "no-chaos")["spend"]
    assert limited["llm_calls"] == calm["llm_calls"] + 1  # the 429, not billed, and the retry
    assert (limited["input_tokens"], limited["output_tokens"]) == (calm["input_tokens"], calm["output_tokens"])
    by = {s["scenario"]: s for s in run.results["spend"]}
    assert by["quote-tool-down"]["amplification"]["llm_calls"] == 1.0
    assert by["llm-rate-limited"]["amplification"]["tokens"] == 1.0


@pytest.mark.timeout(150)
def test_langgraph_agent_token_sums_match_what_the_provider_reported(tmp_path: Path) -> None:
    pytest.importorskip("langgraph", reason="LangGraph installs with the dev tools on Python 3.13+ only")
    pytest.importorskip("langchain_openai", reason="langchain-openai installs with the dev tools on Python 3.13+ only")
    config = example_config()
    config["chaos_matrix"] = [s for s in config["chaos_matrix"] if s["name"] in SCENARIOS]
    run = run_langgraph_example(tmp_path, config)
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    check_sums(run)
    assert "; run so far: " in run.stderr  # the progress lines show the run's spend so far


@pytest.mark.skipif(sys.platform == "win32", reason="the agent runs under a POSIX shell environment")
@pytest.mark.timeout(150)
def test_node_openai_agent_token_sums_match_what_the_provider_reported(tmp_path: Path) -> None:
    script = node_agent()
    with world() as upstream:
        config = example_config()
        config["proxy"], env = proxy_section(upstream)
        env.update({"AGENT_STREAM": "1", "STREAM_USAGE": "1", "FORWARD_CELL": "1"})
        config["agent"] = {"type": "command", "command": ["node", str(script)], "env": env, "timeout_ms": 20000}
        config["chaos_matrix"] = [s for s in config["chaos_matrix"] if s["name"] in SCENARIOS]
        config["run"] = {"seed": 7, "concurrency": 2, "attribution": "header"}
        path = tmp_path / "flakeproxy.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        out = flakeproxy("contract", "run", "-c", str(path), "-o", str(tmp_path / "out"))
    run = read_results(out, tmp_path / "out", path)
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    check_sums(run)
