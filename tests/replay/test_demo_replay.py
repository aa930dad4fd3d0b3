"""Acceptance: record the demo's careful agent, replay it with the upstreams idle or stopped, change it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from flakeproxy.config import load_config
from flakeproxy.results import RunResult
from flakeproxy.runner.engine import run_contract_async
from flakeproxy.runner.replay import run_replay_async
from tests.replay.demo_world import PROMPTS, Counter, DemoWorld, counting_upstream, new_world, serving
from tests.support.loops import LoopThread


@pytest.fixture(scope="module")
def thread() -> Iterator[LoopThread]:
    loop = LoopThread("demo-world")
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def recorded(thread: LoopThread, tmp_path_factory: pytest.TempPathFactory) -> tuple[DemoWorld, Path, RunResult]:
    """The careful agent's contract run for 2 prompts, recorded into sessions/ (upstreams stopped after)."""
    folder = tmp_path_factory.mktemp("record")
    world, counter = new_world(thread), Counter([])
    with serving(thread, counting_upstream(counter), world.upstream_port), serving(thread, world.agent()) as agent:
        path = world.config(folder, agent)
        result = asyncio.run(
            run_contract_async(load_config(path), str(path), folder / "out", record=folder / "sessions")
        )
    assert counter.requests, "the recording run reached no upstream"
    return world, folder / "sessions", result


def replay(
    world: DemoWorld, folder: Path, sessions: Path, agent_port: int, lines: list[str] | None = None, **replays: object
) -> RunResult:
    path = world.config(folder, agent_port, replays={"sources": [str(sessions)], **replays})
    progress = (lines if lines is not None else []).append
    return asyncio.run(run_replay_async(load_config(path), str(path), folder / "out", progress=progress))


@pytest.mark.timeout(120)
def test_a_recorded_run_replays_identically_with_no_upstream_request(
    recorded: tuple[DemoWorld, Path, RunResult], thread: LoopThread, tmp_path: Path
) -> None:
    world, sessions, original = recorded
    files = sorted(sessions.glob("*.yaml"))
    assert len(files) == 2
    answers = {e.prompt: e.answer for e in original.episodes}
    assert sorted(yaml.safe_load(f.read_text())["input"] for f in files) == sorted(PROMPTS)
    # the upstreams up but idle: they get nothing
    counter = Counter([])
    with serving(thread, counting_upstream(counter), world.upstream_port), serving(thread, world.agent()) as agent:
        idle = replay(world, tmp_path / "idle", sessions, agent)
    assert counter.requests == [], "an upstream was called during the replay"
    # the upstreams stopped: the same answers
    lines: list[str] = []
    with serving(thread, world.agent()) as agent:
        stopped = replay(world, tmp_path / "stopped", sessions, agent, lines)
    # each episode's progress line names its session, not a prompt index that is only its place in the list
    ids = sorted(f.stem for f in files)
    assert sorted(line.split("] replay ")[1].split(":")[0] for line in lines[1:]) == ids, lines
    for result in (idle, stopped):
        assert result.replay is not None and result.replay.passed, result.replay
        replayed = {e.prompt: e.answer for e in result.episodes}
        assert replayed == answers and all(answers.values())
        assert [s.answer_matches_recording for s in result.replay.sessions] == [True, True]
        assert all(s.served == 4 and s.unmatched == [] for s in result.replay.sessions), result.replay.sessions


@pytest.mark.timeout(120)
def test_an_agent_calling_another_tool_url_makes_the_session_error_naming_the_request(
    recorded: tuple[DemoWorld, Path, RunResult], thread: LoopThread, tmp_path: Path
) -> None:
    world, sessions, _ = recorded
    with serving(thread, world.agent(tools_path="/v2")) as agent:
        result = replay(world, tmp_path, sessions, agent)
    assert result.replay is not None and not result.replay.passed
    for session in result.replay.sessions:
        assert session.outcome == "error", session
        wanted = f"GET http://127.0.0.1:{world.upstream_port}/v2/v1/quotes?symbol=AAPL (no target; listener tools)"
        assert session.unmatched == [wanted]
        assert wanted in session.reason


@pytest.mark.timeout(120)
def test_ci_with_replays_shows_the_replay_pillar_and_its_weights(
    recorded: tuple[DemoWorld, Path, RunResult], thread: LoopThread, tmp_path: Path
) -> None:
    from flakeproxy.reports.terminal import render
    from flakeproxy.runner.ci import run_ci_async

    world, sessions, _ = recorded
    # the upstreams up for the contract pillar: a calm scenario whose upstreams answer nothing stops ci (exit 3);
    # the replay pillar is served from the recording either way (the test above shows it with them stopped)
    with serving(thread, counting_upstream(Counter([])), world.upstream_port), serving(thread, world.agent()) as agent:
        path = world.config(tmp_path, agent, replays={"sources": [str(sessions)]})
        result = asyncio.run(run_ci_async(load_config(path), str(path), tmp_path / "out"))
    assert result.ci is not None
    pillar = next(p for p in result.ci.pillars if p.name == "replay")
    assert pillar.ran and pillar.score == 100.0 and pillar.weight == 0.10, pillar
    # the contract's invariants that apply when calm: always-cite-source (critical 3), max-latency (medium 1) and
    # no-tool-loop (high 2); bounded-spend compares with a calm run, which a replay has not: left out
    assert [i.weight for i in pillar.items] == [6.0, 6.0]
    assert "2/2 sessions hold (severity weight 12 over 2 sessions)" in pillar.summary
    assert pillar.share > 0.10, "absent pillars' weight is spread over the replay pillar too"
    assert "mutation, chaos absent" in (result.ci.redistribution or "")
    assert "replay" in render(result) and "2/2 sessions hold" in render(result)


@pytest.mark.timeout(120)
def test_export_from_results_json_writes_sessions_that_replay(
    recorded: tuple[DemoWorld, Path, RunResult], thread: LoopThread, tmp_path: Path
) -> None:
    import subprocess
    import sys

    world, _, original = recorded
    results = tmp_path / "results.json"
    results.write_text(original.model_dump_json())
    export = [sys.executable, "-m", "flakeproxy", "replay", "export", "--from", str(results), "-o"]
    done = subprocess.run([*export, str(tmp_path / "all")], capture_output=True, text=True, timeout=60)
    failed = subprocess.run([*export, str(tmp_path / "failed"), "--failed"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and failed.returncode == 0, done.stderr + failed.stderr
    files = sorted((tmp_path / "all").glob("*.yaml"))
    assert len(files) == 2 and "exported 0 sessions (failing episodes" in failed.stderr
    data = yaml.safe_load(files[0].read_text())
    assert any("SSE event timing is not kept" in n for n in data["notes"])
    with serving(thread, world.agent()) as agent:
        result = replay(world, tmp_path / "replay", tmp_path / "all", agent, speed=0)
    assert result.replay is not None and result.replay.passed, result.replay
    assert {e.prompt: e.answer for e in result.episodes} == {e.prompt: e.answer for e in original.episodes}


@pytest.mark.timeout(120)
def test_a_recorded_chaos_episode_says_its_responses_are_the_faulted_ones(thread: LoopThread, tmp_path: Path) -> None:
    """Its session serves the fault the agent received (a 503 here) as if the upstream had answered it, so it
    says so in its notes, as an exported session of the same episode does; a calm episode's has no such note."""
    world = new_world(thread)
    with serving(thread, counting_upstream(Counter([])), world.upstream_port), serving(thread, world.agent()) as agent:
        path = world.config(tmp_path, agent)
        data = yaml.safe_load(path.read_text())
        data["golden_prompts"] = PROMPTS[:1]
        down = {"name": "tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}]}
        data["chaos_matrix"].append(down)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        asyncio.run(run_contract_async(load_config(path), str(path), tmp_path / "out", record=tmp_path / "sessions"))
    notes = {f.stem: yaml.safe_load(f.read_text()).get("notes") for f in (tmp_path / "sessions").glob("*.yaml")}
    assert notes == {
        "no-chaos-p0-r0": None,
        "tool-down-p0-r0": ["recorded under scenario tool-down; faults applied on the wire: tool_faults[0] error"],
    }
    down_session = yaml.safe_load((tmp_path / "sessions" / "tool-down-p0-r0.yaml").read_text())
    assert down_session["scenario"] == "tool-down"
    [faulted] = [x for x in down_session["exchanges"] if x.get("fault")]
    assert (faulted["status"], faulted["fault"]["kind"], faulted["fault"]["effect"]) == (503, "error", "replied 503")
    # replayed (the LLM live, for the naive agent asks it other things), it is judged as the scenario it was
    # recorded under: the recorded 503 is served again (journaled as a replayed fault that applied), so
    # never-fabricate-when-tools-fail judges the answer: the careful agent holds, the naive one makes a price up
    for careful, outcome in ((True, "pass"), (False, "fail")):
        counter = Counter([])
        with (
            serving(thread, counting_upstream(counter), world.upstream_port),
            serving(thread, world.agent(careful=careful)) as agent,
        ):
            session_file = tmp_path / "sessions" / "tool-down-p0-r0.yaml"
            folder = tmp_path / f"replay-{careful}"
            # the naive agent calls the failed tool again: a call the recording lacks gets 404 (the feed still down)
            replays = {"sources": [str(session_file)], "llm": "live", "speed": 0, "unmatched": "404"}
            path = world.config(folder, agent, replays=replays, chaos_matrix=[{"name": "no-chaos"}, down])
            result = asyncio.run(run_replay_async(load_config(path), str(path), folder / "out"))
        assert result.replay is not None and not [r for r in counter.requests if "/v1/quotes" in r], counter
        [session] = result.replay.sessions
        assert session.outcome == outcome, (session.reason, [e.get("fault") for e in result.episodes[0].journal])
        assert "never-fabricate-when-tools-fail" in session.verdicts, session.verdicts
        [episode] = result.episodes
        [replayed] = [f for f in episode.faults() if f.replayed]
        assert (replayed.kind, replayed.applied, replayed.scenario) == ("error", True, "tool-down")


@pytest.mark.timeout(120)
def test_a_tool_fault_layered_on_a_replay_names_itself_not_the_agent_as_the_change(
    recorded: tuple[DemoWorld, Path, RunResult], thread: LoopThread, tmp_path: Path
) -> None:
    """replays.scenario with a tool fault: the agent sends the LLM the changed tool answer, which no recording
    has. The same agent: the reason says the layered faults changed its requests, and what to do."""
    world, sessions, _ = recorded
    with serving(thread, world.agent()) as agent:
        path = world.config(tmp_path, agent, replays={"sources": [str(sessions)], "scenario": "tool-drift", "speed": 0})
        data = yaml.safe_load(path.read_text())
        drift = [{"tool": "market_data_api", "mode": "schema_drift", "rename": {"price": "last"}}]
        data["chaos_matrix"].append({"name": "tool-drift", "tool_faults": drift})
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        result = asyncio.run(run_replay_async(load_config(path), str(path), tmp_path / "out"))
    assert result.replay is not None
    for session in result.replay.sessions:
        assert session.outcome == "error" and session.unmatched, session
        assert "the faults of scenario tool-drift applied" in session.reason, session.reason
        assert "replays.llm: live" in session.reason and "no longer describes the agent" not in session.reason
