"""Episodes: one paid agent run per answer, faults that count only when they reached the agent, traffic
checks that judge what happened or say they cannot. Real proxy, real agents, the official openai SDK."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from flakeproxy import control_api as api
from flakeproxy import parse_config
from flakeproxy.config import FlakeproxyConfig
from flakeproxy.config.agent import PythonAgent
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.results import Episode, RunResult
from flakeproxy.runner.agents.python import PythonAdapter
from flakeproxy.runner.control import ControlClient
from flakeproxy.runner.episodes import EpisodeRunner
from flakeproxy.runner.ports import Opening, Records
from tests.runner.world import run, world

ALWAYS = [
    {"id": "cites", "type": "regex", "pattern": "(?i)(source|feed|unavailable)"},
    {"id": "answers", "type": "completes"},
    {"id": "not-empty", "type": "output_not_empty"},
    {"id": "fast", "type": "latency", "max_ms": 60000},
    {"id": "no-pii", "type": "excludes_pii"},
    {"id": "few-calls", "type": "call_count", "target": "market_data_api", "max": 3},
]
FIVE = [
    {"name": "no-chaos"},
    {"name": "tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}]},
    {"name": "tool-slow", "tool_faults": [{"tool": "market_data_api", "mode": "slow", "delay_ms": 5}]},
    {"name": "llm-truncated", "llm_faults": [{"mode": "truncated_response", "max_tokens": 4}]},
    {"name": "llm-down", "llm_faults": [{"mode": "error", "error_code": 500}]},
]


def outcomes(result: RunResult) -> dict[tuple[str, str], str]:
    return {(c.invariant, c.scenario): c.outcome for c in result.cells}


def test_episode_mode_pays_once_per_answer_cell_mode_once_per_cell(tmp_path: Path) -> None:
    runs: dict[str, tuple[int, RunResult]] = {}
    for isolation in ("episode", "cell"):
        with world(tmp_path / isolation, invariants=ALWAYS, matrix=FIVE, run={"isolation": isolation}) as w:
            w.data["golden_prompts"] = ["What is AAPL trading at?", "And MSFT?"]
            w.config.write_text(yaml.safe_dump(w.data))
            result = run(w.config)
            runs[isolation] = (w.agent.invocations, result)
            assert w.agent.resets == w.agent.invocations  # every episode starts from a reset
    (episode_calls, by_episode), (cell_calls, by_cell) = runs["episode"], runs["cell"]
    assert episode_calls == 10 and by_episode.agent_invocations == 10 and len(by_episode.episodes) == 10
    assert cell_calls == 60 and by_cell.agent_invocations == 60
    assert outcomes(by_episode) == outcomes(by_cell)
    assert "fail" in outcomes(by_episode).values() or "error" in outcomes(by_episode).values()  # not all green
    # every cell of a scenario judged the same two episodes
    tool_down = [c for c in by_episode.cells if c.scenario == "tool-down"]
    assert len({tuple(c.episodes) for c in tool_down}) == 1 and len(tool_down[0].episodes) == 2


def test_one_at_a_time_each_end_opens_the_next_episode_and_judges_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23: one at a time against its own proxy, an agent with no reset makes one control call per episode
    boundary (the end opens the next, POST /episodes/{id}/end with `next`), and the run judges what it judged with
    a begin and an end each (an agent with a reset runs before its episode opens: no merging there)."""
    calls: list[tuple[str, bool]] = []
    real = ControlClient.call

    async def counted(self: ControlClient, route: api.Route, body: Any = None, *args: Any, **kw: Any) -> Any:
        calls.append((route.template, getattr(body, "next", None) is not None))
        return await real(self, route, body, *args, **kw)

    monkeypatch.setattr(ControlClient, "call", counted)
    runs: dict[bool, RunResult] = {}
    for reset in (True, False):
        calls.clear()
        with world(tmp_path / str(reset), reset=reset, invariants=ALWAYS, matrix=FIVE) as w:
            w.data["golden_prompts"] = ["What is AAPL trading at?", "And MSFT?"]
            w.config.write_text(yaml.safe_dump(w.data))
            runs[reset] = result = run(w.config)
        episodes = len(result.episodes)
        begins = calls.count((api.EPISODE_BEGIN.template, False))
        ends = [c for c in calls if c[0] == api.EPISODE_END.template]
        if reset:
            assert (begins, len(ends), any(merged for _, merged in ends)) == (episodes, episodes, False)
        else:
            assert begins == 1 and len(ends) == episodes and sum(merged for _, merged in ends) == episodes - 1
        for episode in result.episodes:  # each episode's journal is its own, under its own scenario
            assert episode.journal and {e["episode"] for e in episode.journal} == {episode.cell_id}
            statuses = {e["status"] for e in episode.journal if "/v1/quotes" in e["url"]}
            assert statuses == ({503} if episode.scenario == "tool-down" else {200}), (episode.scenario, statuses)
        assert len({e.cell_id for e in result.episodes}) == episodes == (10 if reset else 11)  # + the stateful check
    assert outcomes(runs[True]) == outcomes(runs[False])


def test_a_check_that_calls_out_between_episodes_keeps_them_apart(tmp_path: Path) -> None:
    """A state check judged after its episode (here a command fetching a quote through the proxy's tools listener)
    runs between two episodes: the next one must not be open yet, or its request lands in it and gets its faults
    (a trial's: calm's check failed on tool-down's 503). Such a run opens each episode on its own (no `next`)."""
    with world(tmp_path, reset=False, matrix=FIVE[:2], run={"replicas": 2}) as w:
        tools = w.data["proxy"]["listeners"][0]["listen"]
        url = f"http://{tools}/v1/quotes?symbol=STATECHECK"
        fetch = f"import urllib.request; urllib.request.urlopen('{url}', timeout=5)"
        w.data["contract"]["invariants"] = [
            {"id": "cites", "type": "regex", "pattern": "(?i)(source|feed|unavailable)"},
            {"id": "quotes-up", "type": "command_exit", "command": f'{sys.executable} -c "{fetch}"'},
        ]
        w.config.write_text(yaml.safe_dump(w.data))
        result = run(w.config)
    assert all("STATECHECK" not in e["url"] for episode in result.episodes for e in episode.journal)
    assert [result.cell("quotes-up", s["name"]).outcome for s in FIVE[:2]] == ["pass", "pass"]
    assert len(result.unattributed_journal) == len(result.episodes) - 1  # each check's fetch, of no episode


def test_a_tool_fault_on_a_name_the_agent_never_calls_is_an_error_not_a_pass(tmp_path: Path) -> None:
    invariants = [
        {"id": "cites", "type": "regex", "pattern": "(?i)source", "severity": "critical"},
        {"id": "no-figures", "type": "regex", "pattern": r"\$\d", "negate": True, "when": "tool_faults_active"},
    ]
    matrix = [{"name": "news-down", "tool_faults": [{"tool": "news_api", "mode": "error", "error_code": 503}]}]
    with world(tmp_path, invariants=invariants, matrix=matrix) as w:
        w.data["targets"]["news_api"] = {"listener": "tools", "path": "/v1/news*"}
        w.config.write_text(yaml.safe_dump(w.data))
        result = run(w.config)
    cell = result.cell("no-figures", "news-down")
    assert cell.outcome == "error" and "scenario news-down injected nothing" in cell.reason
    # the answer passed, but under no fault: a calm run's pass, not one under news-down (trials read it as one)
    cites = result.cell("cites", "news-down")
    assert cites.outcome == "not_applicable" and cites.reason.startswith("no fault of news-down reached these episodes")
    assert result.score is not None and result.score.verdict == "FAIL"
    assert any("news-down injected nothing" in r for r in result.score.reasons)
    [cov] = result.coverage
    assert (cov.decided, cov.applied) == (0, 0) and cov.injected_nothing
    assert any("scenario news-down injected nothing" in w for w in result.warnings)


def test_behavior_unchanged_auto_reuses_the_calm_episodes(tmp_path: Path) -> None:
    same = [{"id": "same", "type": "behavior_unchanged", "baseline": "auto", "when": "any_chaos_active"}]
    chaos = FIVE[1:3]
    with world(tmp_path / "calm", invariants=same, matrix=[FIVE[0], *chaos]) as w:
        result = run(w.config)
        assert w.agent.invocations == 3  # no extra call: the calm scenario's episode is the baseline
    slow = result.cell("same", "tool-slow")
    assert slow.outcome == "pass" and slow.verdicts[0].evidence["baseline"].startswith("AAPL trades at $189.50")
    assert result.cell("same", "tool-down").outcome == "fail"  # "unavailable" is not the calm answer
    with world(tmp_path / "none", invariants=same, matrix=chaos) as w:
        result = run(w.config)
        assert w.agent.invocations == 3  # one baseline episode, run without chaos
    [baseline] = [e for e in result.episodes if e.purpose == "baseline"]
    assert baseline.scenario is None and baseline.journal and not baseline.faults(applied=None)
    assert result.cell("same", "tool-slow").outcome == "pass"


# --- the official openai SDK as the agent's client --------------------------------------------------------

openai = pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")
from tests.support.sdk_agent import sdk_world  # noqa: E402

CUT = [{"name": "llm-stream-cut", "llm_faults": [{"mode": "stream_cut", "after_events": 3}]}]
NO_PARTIAL = [
    {"id": "whole-answer", "type": "regex", "pattern": r"source says\.$", "when": "llm_faults_active"},
    {"id": "answers", "type": "completes"},
]


def test_stream_cut_on_a_json_client_injects_nothing_and_the_run_cannot_pass(tmp_path: Path) -> None:
    with sdk_world(tmp_path, NO_PARTIAL, CUT, stream=False) as (config, _sdk, _up):
        result = run(config)
    [episode] = result.episodes
    [fault] = episode.faults(applied=None)
    assert fault.applied is False
    assert (
        fault.not_applied_reason
        == "the agent asked for no stream: the answer came whole, and stream_cut acts on streamed answers only"
    )
    cell = result.cell("whole-answer", "llm-stream-cut")
    assert (
        cell.outcome == "error"
        and "injected nothing" in cell.reason
        and "the agent asked for no stream" in cell.reason
        and "check the targets" not in cell.reason
    )
    assert result.score is not None and result.score.verdict == "FAIL"
    assert any("llm-stream-cut injected nothing" in r for r in result.score.reasons)
    assert result.coverage[0].faults[0].not_applied_reasons == [fault.not_applied_reason]


def test_stream_cut_on_a_streaming_client_applies(tmp_path: Path) -> None:
    with sdk_world(tmp_path, NO_PARTIAL, CUT, stream=True) as (config, _sdk, _up):
        result = run(config)
    [fault] = result.episodes[0].faults()
    assert fault.kind == "stream_cut" and fault.applied is True
    cell = result.cell("whole-answer", "llm-stream-cut")
    assert cell.outcome == "fail" and cell.faults_injected == [fault]  # the SDK accepted the cut answer silently
    assert result.coverage[0].applied == 1 and not result.coverage[0].injected_nothing


RETRIES = [
    {"id": "bounded-retries", "type": "retries_after_fault", "target": "llm", "max": 1},
    {"id": "waits", "type": "retry_after_respected", "target": "llm"},
    {"id": "answers", "type": "completes"},
    {"id": "cites", "type": "regex", "pattern": "(?i)source"},
]


def test_retries_count_repeats_of_the_faulted_request_only(tmp_path: Path) -> None:
    matrix = [
        {"name": "calm"},
        {"name": "one-429", "llm_faults": [{"mode": "rate_limit", "retry_after_s": 1, "times": 1}]},
    ]
    with sdk_world(tmp_path, RETRIES, matrix, steps=2) as (config, sdk, _up):
        result = run(config)
        assert sdk.invocations == 2
    limited = result.cell("bounded-retries", "one-429")
    assert limited.outcome == "pass" and limited.verdicts[0].evidence["retries"] == 1, limited
    assert len(result.episode(limited.episodes[0]).journal) == 3  # the 429, its retry, the agent's next step
    assert result.cell("waits", "one-429").outcome == "pass"
    calm = result.cell("bounded-retries", "calm")
    assert calm.outcome == "not_applicable" and "no fault applied on llm" in calm.reason
    assert result.cell("waits", "calm").outcome == "not_applicable"
    assert "no Retry-After was served" in result.cell("waits", "calm").reason


def test_an_agent_that_gave_up_is_still_judged_on_its_traffic(tmp_path: Path) -> None:
    matrix = [{"name": "always-429", "llm_faults": [{"mode": "rate_limit", "retry_after_s": 1}]}]
    invariants = [{**RETRIES[0], "max": 2}, *RETRIES[1:]]
    with sdk_world(tmp_path, invariants, matrix, max_retries=2) as (config, _sdk, _up):
        result = run(config)
    [episode] = result.episodes
    assert episode.error is not None and "HTTP 500" in episode.error and "RateLimitError" in episode.error
    assert [e["status"] for e in episode.journal] == [429, 429, 429]
    retries = result.cell("bounded-retries", "always-429")
    assert retries.outcome == "pass" and retries.verdicts[0].evidence["retries"] == 2
    waits = result.cell("waits", "always-429")
    assert waits.outcome == "pass" and "each of 2 retries waited as asked" in waits.reason
    assert result.cell("answers", "always-429").outcome == "fail"  # completes judges the error itself
    cites = result.cell("cites", "always-429")
    assert cites.outcome == "error" and cites.reason.startswith("agent error: agent answered HTTP 500")


# --- the runner redacts nothing: each port hands over its records redacted once, where it made them -------------

KEY = "PLANTED-tool-key-41c9"
KEYED_AGENT = f"""
def lookup(symbol, api_key):
    return {{"symbol": symbol, "price": 189.5}}

REGISTRY = {{"lookup": lookup}}

def run(prompt):
    for symbol in ("AAPL", "MSFT"):
        REGISTRY["lookup"](symbol, api_key="{KEY}")
    return "I used {KEY} twice (source: lookup)"
"""


class CountingRedactor(Redactor):
    """The config's redactor, counting the entries it redacts (a seam: every entry of an episode passes it)."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        self.entries = 0

    def entry(self, data: Mapping[str, Any], found: set[str] | None = None) -> dict[str, Any]:
        self.entries += 1
        return super().entry(data, found)


class Canned:
    """A port that hands over records as it made them: one entry with a query parameter any redactor would hide."""

    RECORDS = Records([{"url": "http://tools/v1/quotes?api_key=kept-as-given", "started_at": 1.0}], texts=["a", None])

    async def begin(self, opening: Opening) -> str | None:
        return None

    async def turn(self, episode: str, turn: int) -> None:
        return None

    async def end(self, episode: str, texts: list[str | None]) -> Records:
        return self.RECORDS


def _python_config(tmp_path: Path, module: str) -> FlakeproxyConfig:
    data = {
        "version": "2.0",
        "agent": {"type": "python", "callable": f"{module}:run", "tool_registry": f"{module}:REGISTRY"},
        "golden_prompts": ["What is AAPL trading at?"],
        "contract": {"name": "c", "invariants": [{"id": "cites", "type": "regex", "pattern": "source"}]},
        "chaos_matrix": [{"name": "calm"}],
        "redact": ["x-tenant"],
    }
    return parse_config(yaml.safe_dump(data), str(tmp_path / "flakeproxy.yaml"))


async def _one_episode(config: FlakeproxyConfig, near: Path, ports: Callable[[PythonAdapter], list[Any]]) -> Episode:
    assert isinstance(config.agent, PythonAgent)
    agent = PythonAdapter(config.agent, near)
    await agent.start()
    runner = EpisodeRunner(config, agent, None, ports=ports(agent))
    return await runner.run(Episode(id="e1", scenario="calm", prompt="p", prompt_index=0, label="calm | p0 | r0"))


def test_a_python_agents_tool_calls_are_redacted_once_each_where_they_are_recorded(tmp_path: Path) -> None:
    (tmp_path / "keyed_agent.py").write_text(KEYED_AGENT)
    config = _python_config(tmp_path, "keyed_agent")
    counting = CountingRedactor(config.redact)
    done = asyncio.run(_one_episode(config, tmp_path, lambda agent: agent.ports(counting)))
    assert counting.entries == 2  # one per tool call: the runner redacts none again
    assert [e["request_body"] for e in done.journal] == [
        f'{{"args": ["{symbol}"], "kwargs": {{"api_key": "[redacted]"}}}}' for symbol in ("AAPL", "MSFT")
    ]
    assert done.answer == "I used [redacted] twice (source: lookup)"  # the tool port scrubbed its texts


def test_the_runner_hands_on_each_ports_records_as_the_port_gave_them(tmp_path: Path) -> None:
    (tmp_path / "plain_agent.py").write_text(KEYED_AGENT)
    done = asyncio.run(_one_episode(_python_config(tmp_path, "plain_agent"), tmp_path, lambda agent: [Canned()]))
    assert done.journal == Canned.RECORDS.journal  # not redacted a second time: the port is the source
    assert (done.answer, done.error) == ("a", None)


def test_a_ports_secrets_stay_out_of_its_repr() -> None:
    records = Records([], texts=["[redacted]"], secrets=frozenset({KEY}))
    assert KEY not in repr(records) and records == Records([], texts=["[redacted]"])


def test_a_matrix_whose_only_scenario_injected_nothing_fails_saying_so(tmp_path: Path) -> None:
    """Its one check passed under no fault, so it is n/a; nothing is left to score, and the run FAILs on the
    scenario that injected nothing (not a config error: the config was fine, the agent never called the tool)."""
    invariants = [{"id": "cites", "type": "regex", "pattern": "(?i)source", "severity": "critical"}]
    matrix = [{"name": "news-down", "tool_faults": [{"tool": "news_api", "mode": "error", "error_code": 503}]}]
    with world(tmp_path, invariants=invariants, matrix=matrix) as w:
        w.data["targets"]["news_api"] = {"listener": "tools", "path": "/v1/news*"}
        w.config.write_text(yaml.safe_dump(w.data))
        result = run(w.config)
    assert result.cell("cites", "news-down").outcome == "not_applicable"
    assert result.score is not None and result.score.verdict == "FAIL" and result.score.resilience is None
    assert result.score.reasons == ["scenario news-down injected nothing: no fault changed what the agent received"]
