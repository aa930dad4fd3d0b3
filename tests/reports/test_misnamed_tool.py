"""A fault on an MCP tool target whose mcp_tool names no tool the agent called: the hint names the ones it did."""

from __future__ import annotations

from pathlib import Path

import yaml

from flakeproxy.config import parse_config
from flakeproxy.judging.unreached import undecided
from flakeproxy.results import RunResult


def test_a_misspelled_mcp_tool_is_told_the_tools_the_agent_called(demo_dir: Path, demo: dict[str, RunResult]) -> None:
    """A trial's `mcp_tool: get_qoute` got "no request matched its faults; check targets", which named nothing.
    Judged on the demo's real journals (its agent calls the MCP tool web_search), with the target misspelled."""
    data = yaml.safe_load((demo_dir / "careful" / "flakeproxy.yaml").read_text())
    data["targets"]["web_search"]["mcp_tool"] = "web_serach"
    config = parse_config(yaml.safe_dump(data), "demo.yaml")
    scenario = config.scenario("indirect-injection")

    # the journals as they would have been: no request matched the target, and no fault was decided on one
    def unmatched(entry: dict[str, object]) -> dict[str, object]:
        targets = [t for t in entry.get("targets") or [] if t != "web_search"]  # type: ignore[attr-defined]
        return {**{k: v for k, v in entry.items() if k != "fault"}, "targets": targets}

    episodes = [
        e.model_copy(update={"journal": [unmatched(j) for j in e.journal]})
        for e in demo["careful"].episodes
        if e.scenario == "indirect-injection"
    ]
    cause = undecided(config, scenario, episodes)
    assert cause is not None
    assert cause.detail() == (
        "no MCP call of its episodes was to web_search (mcp_tool: web_serach); the agent called web_search there: "
        "is the mcp_tool name misspelled?"
    )
