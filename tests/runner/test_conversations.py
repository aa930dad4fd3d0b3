"""Conversations (issue 24): a golden prompt of several turns runs as one episode, its turns in order after one
reset, with the history carried by the adapter; faults and checks say which turn they are about. Real proxy,
a real stateless chat endpoint on the official openai SDK, a fake OpenAI-compatible LLM whose answer to turn 2
depends on turn 1."""

from __future__ import annotations

import asyncio
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from flakeproxy import load_config
from flakeproxy.cli.report import load_result
from flakeproxy.replay.export import export_sessions
from flakeproxy.reports import facts
from flakeproxy.reports import write as write_reports
from flakeproxy.reports.terminal import render as render_terminal
from flakeproxy.results import RunResult
from flakeproxy.runner.ci import run_ci_async
from flakeproxy.runner.engine import run_contract_async
from flakeproxy.runner.replay import run_replay_async
from tests.support.chat import INVARIANTS, TURNS, llm_routes, stateless_agent_routes
from tests.support.loops import free_port, running_app

pytest.importorskip("openai")

CALM = {"name": "no-chaos"}
RATE_LIMITED_ON_TURN_2 = {
    "name": "rate-limited-turn-2",
    "llm_faults": [{"mode": "rate_limit", "retry_after_s": 0, "turns": [2], "times": 1}],
}


@dataclass
class ChatWorld:
    config: Path
    data: dict[str, Any]
    resets: list[int]
    llm_listener: str

    def write(self) -> None:
        self.config.write_text(yaml.safe_dump(self.data, sort_keys=False))

    def run(self) -> RunResult:
        self.write()
        out = self.config.parent / "out"
        return asyncio.run(run_contract_async(load_config(self.config), str(self.config), out))


@contextmanager
def chat_world(
    tmp: Path, template: Any, matrix: list[dict[str, Any]] | None = None, llm_up: bool = True
) -> Iterator[ChatWorld]:
    """The stateless endpoint behind the proxy's llm listener, asked the 3-turn conversation (llm_up=False: the
    listener's upstream is a port nothing listens on)."""
    llm_listen, resets = f"127.0.0.1:{free_port()}", list[int]()
    with (
        running_app(llm_routes(), "chat-llm") as llm,
        running_app(stateless_agent_routes(f"http://{llm_listen}", resets), "chat-agent") as agent,
    ):
        data: dict[str, Any] = {
            "version": "2.0",
            "agent": {
                "type": "http",
                "endpoint": f"{agent}/chat",
                "request_template": template,
                "response_path": "$.reply",
                "reset_endpoint": f"{agent}/reset",
                "timeout_ms": 20000,
            },
            "proxy": {
                "admin": f"127.0.0.1:{free_port()}",
                "listeners": [
                    {
                        "name": "llm",
                        "listen": llm_listen,
                        "upstream": llm if llm_up else f"http://127.0.0.1:{free_port()}",
                    }
                ],
            },
            "targets": {"llm": {"listener": "llm", "api": "openai"}},
            "golden_prompts": [{"id": "aapl-in-euros", "turns": TURNS}],
            "contract": {"name": "Conversation contract", "invariants": INVARIANTS},
            "chaos_matrix": matrix or [CALM],
            "run": {"seed": 3, "output": str(tmp / "out")},
        }
        tmp.mkdir(parents=True, exist_ok=True)
        yield ChatWorld(tmp / "flakeproxy.yaml", data, resets, llm_listen)


WITH_HISTORY = {"model": "gpt-4o-mini", "messages": "{messages}"}
HISTORY_DROPPED = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "{prompt}"}]}


def test_a_stateless_endpoint_given_messages_passes_the_conversation(tmp_path: Path) -> None:
    with chat_world(tmp_path, WITH_HISTORY) as w:
        result = w.run()
    assert w.resets == [1]  # one reset for the episode, before turn 1, never between turns
    [episode] = result.episodes
    assert episode.prompt == "aapl-in-euros" and episode.turns == TURNS
    assert episode.transcript is not None
    assert [t.answer for t in episode.transcript] == [
        "AAPL trades at $189.50.",
        "AAPL is at 174.34 EUR.",
        "You asked about AAPL.",
    ]
    assert episode.answer == "You asked about AAPL."
    assert episode.latency_ms == pytest.approx(sum(t.latency_ms for t in episode.transcript), abs=0.5)
    # the model got the whole conversation on turn 3: 2 earlier turns + their answers + the new turn
    llm_calls = [e for e in episode.journal if "/chat/completions" in e["url"]]
    assert [e["turn"] for e in llm_calls] == [1, 2, 3]
    assert '"And in euros?"' in llm_calls[2]["request_body"] and "174.34 EUR" in llm_calls[2]["request_body"]
    assert all(c.outcome == "pass" for c in result.cells), [(c.invariant, c.reason) for c in result.cells]
    assert result.score is not None and result.score.verdict == "PASS"


def test_the_same_endpoint_with_the_history_dropped_fails_it(tmp_path: Path) -> None:
    with chat_world(tmp_path, HISTORY_DROPPED) as w:
        result = w.run()
    [episode] = result.episodes
    assert episode.transcript is not None
    ask_back = "Which stock do you mean?"
    assert [t.answer for t in episode.transcript] == ["AAPL trades at $189.50.", ask_back, ask_back]
    euros = result.cell("in-euros", "no-chaos")
    assert euros.outcome == "fail" and euros.verdicts[0].reason.startswith("turn 2: ")
    remembers = result.cell("remembers", "no-chaos")
    assert remembers.outcome == "fail" and remembers.verdicts[0].evidence["turn"] == 2  # the first turn that failed
    assert result.cell("answers", "no-chaos").outcome == "pass"  # it did answer every turn: the answers are wrong
    assert result.cell("never-asks-back", "no-chaos").outcome == "fail"
    assert result.score is not None and result.score.verdict == "FAIL"


def _rate_limit_hits(result: RunResult) -> list[tuple[str, int | None, int]]:
    """(episode, turn, status) of every faulted journal entry of the rate-limited scenario."""
    return [
        (e.id, entry.get("turn"), entry["status"])
        for e in result.episodes
        if e.scenario == "rate-limited-turn-2"
        for entry in e.journal
        if entry.get("fault")
    ]


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_rate_limit_on_turn_2_hits_turn_2_only(tmp_path: Path, concurrency: int) -> None:
    with chat_world(tmp_path, WITH_HISTORY, [CALM, RATE_LIMITED_ON_TURN_2]) as w:
        w.data["run"] |= {"replicas": 4, "concurrency": concurrency, "attribution": "header"}
        result = w.run()
    faulted = [e for e in result.episodes if e.scenario == "rate-limited-turn-2"]
    assert len(faulted) == 4 and all(e.unattributed == 0 for e in result.episodes)
    hits = _rate_limit_hits(result)
    assert sorted(hits) == sorted((e.id, 2, 429) for e in faulted)  # one 429 per episode, on turn 2 only
    for episode in faulted:
        assert episode.transcript is not None
        # the SDK retried the 429 and the conversation went on
        assert [t.answer for t in episode.transcript][1] == "AAPL is at 174.34 EUR."
        statuses = [(entry["turn"], entry["status"]) for entry in episode.journal]
        assert statuses == [(1, 200), (2, 429), (2, 200), (3, 200)]
        [record] = episode.faults()
        assert record.turn == 2 and record.kind == "rate_limit"
    [coverage] = [c for c in result.coverage if c.scenario == "rate-limited-turn-2"]
    [fault] = coverage.faults
    assert fault.applied == 4 and fault.applied_turns == {2: 4}
    assert all(c.outcome == "pass" for c in result.cells), [(c.invariant, c.scenario, c.reason) for c in result.cells]


NODE_AGENT = Path(__file__).parents[2] / "examples" / "conversations" / "chat_agent.mjs"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("mode", ["one_process", "process_per_turn"])
def test_a_node_command_agent_passes_the_conversation(tmp_path: Path, mode: str) -> None:
    """No npm packages: one process reading a turn per line, or one process per turn keeping the conversation
    under FLAKEPROXY_SESSION; a rate limit on turn 2 is waited out."""
    with chat_world(tmp_path, WITH_HISTORY, [CALM, RATE_LIMITED_ON_TURN_2]) as w:
        per_turn = ["--per-turn"] if mode == "process_per_turn" else []
        w.data["agent"] = {
            "type": "command",
            "command": ["node", str(NODE_AGENT), *per_turn],
            "env": {"LLM_URL": f"http://{w.llm_listener}", "STATE_DIR": str(tmp_path)},
            "conversation": mode,
            "timeout_ms": 20000,
        }
        result = w.run()
    for episode in result.episodes:
        assert episode.transcript is not None and episode.error is None
        assert [t.answer for t in episode.transcript] == [
            "AAPL trades at $189.50.",
            "AAPL is at 174.34 EUR.",
            "You asked about AAPL.",
        ]
    [limited] = [e for e in result.episodes if e.scenario == "rate-limited-turn-2"]
    assert [(entry["turn"], entry["status"]) for entry in limited.journal] == [(1, 200), (2, 429), (2, 200), (3, 200)]
    assert all(c.outcome == "pass" for c in result.cells), [(c.invariant, c.scenario, c.reason) for c in result.cells]
    if mode == "process_per_turn":
        # one session per episode (the matrix's two and the stateful check's second run), kept across its turns
        assert len(list(tmp_path.glob("fp-*.json"))) == len(result.episodes) == 3


def test_reports_show_the_transcript_with_faults_at_their_turn(tmp_path: Path) -> None:
    with chat_world(tmp_path, HISTORY_DROPPED, [CALM, RATE_LIMITED_ON_TURN_2]) as w:
        w.run()
    out = tmp_path / "out"
    result = load_result(out / "results.json")  # the transcript survives results.json
    write_reports(result, out, ["junit", "html", "md"])
    # JUnit: one testcase per cell as before, each with the conversation in system-out
    suites = ET.parse(out / "junit.xml").getroot()
    cases = [c for c in suites.iter("testcase") if c.get("classname") in ("no-chaos", "rate-limited-turn-2")]
    assert len(cases) == len(result.cells) == 8
    limited = next(c for c in cases if c.get("classname") == "rate-limited-turn-2" and c.get("name") == "in-euros")
    assert limited.find("failure") is not None
    text = limited.findtext("system-out") or ""
    turn2 = text[text.index("  turn 2 ") : text.index("  turn 3 ")]
    assert "user: And in euros?" in turn2 and "agent: Which stock do you mean?" in turn2
    assert "fault: llm_faults[0] rate_limit: applied: replied 429" in turn2
    assert "fault:" not in text[: text.index("  turn 2 ")] + text[text.index("  turn 3 ") :]  # turns 1 and 3: none
    # HTML: the transcript in the cell and the episode, the fault at turn 2
    html = (out / "report.html").read_text()
    assert html.count('<ol class="transcript">') >= 2
    items = re.findall(r'<li class="turn"><b>turn (\d)</b>(.*?)</li>', html, re.S)
    marked = [(turn, "And in euros?" in body) for turn, body in items if "rate_limit" in body]
    assert marked and set(marked) == {("2", True)}  # the fault is shown at turn 2, and only there
    assert "llm_faults[0] rate_limit 1/1, turn 2 x1" in html  # and the coverage says which turn it hit
    # Markdown: the failed conversation turn by turn; the terminal's coverage: the turn the fault hit
    summary = (out / "summary.md").read_text()
    assert "<summary>Conversation of episode" in summary and "2. **user** And in euros?<br>**agent** Which" in summary
    assert "   - fault llm\\_faults\\[0\\] rate\\_limit: applied: replied 429" in summary
    terminal = render_terminal(result)
    assert "llm_faults[0] rate_limit: applied on turn 2 x1" in terminal
    assert "  turn 2 (" in terminal and "    agent: Which stock do you mean?" in terminal  # under the failed cells


def test_a_recorded_conversation_replays_turn_by_turn_with_the_llm_gone(tmp_path: Path) -> None:
    with chat_world(tmp_path / "record", WITH_HISTORY) as w:
        w.write()
        sessions = tmp_path / "sessions"
        out = w.config.parent / "out"
        asyncio.run(run_contract_async(load_config(w.config), str(w.config), out, record=sessions))
    [file] = sessions.glob("*.yaml")
    session = yaml.safe_load(file.read_text())
    assert session["input"] == "aapl-in-euros" and session["turns"] == TURNS
    assert session["answers"] == ["AAPL trades at $189.50.", "AAPL is at 174.34 EUR.", "You asked about AAPL."]
    [exported] = export_sessions(load_result(out / "results.json"), failed=False)  # replay export keeps them too
    assert (exported.turns, exported.answers) == (TURNS, session["answers"])
    with chat_world(tmp_path / "replay", WITH_HISTORY, llm_up=False) as w:
        w.data["replays"] = {"sources": [str(sessions)]}
        w.write()
        result = asyncio.run(run_replay_async(load_config(w.config), str(w.config), w.config.parent / "out"))
    [episode] = result.episodes
    assert episode.turns == TURNS and episode.transcript is not None
    assert [t.answer for t in episode.transcript] == session["answers"]  # served from the recording, turn by turn
    assert [e["turn"] for e in episode.journal] == [1, 2, 3]
    assert result.replay is not None
    [replayed] = result.replay.sessions
    assert replayed.outcome == "pass" and replayed.served == 3 and replayed.unmatched == []


def test_the_ci_chaos_pillar_sends_the_conversation(tmp_path: Path) -> None:
    with chat_world(tmp_path, WITH_HISTORY) as w:
        w.data["invariants"] = [{"id": "in-euros", "type": "regex", "pattern": "EUR", "turn": 2}]
        w.data["chaos"] = {"llm_faults": [RATE_LIMITED_ON_TURN_2["llm_faults"][0]]}  # type: ignore[index]
        w.write()
        result = asyncio.run(run_ci_async(load_config(w.config), str(w.config), w.config.parent / "out"))
    assert result.ci is not None
    [chaos] = [p for p in result.ci.pillars if p.name == "chaos"]
    [item] = chaos.items
    episode = result.episode(item.episode)
    assert episode.turns == TURNS and [(e["turn"], e["status"]) for e in episode.journal][1:3] == [(2, 429), (2, 200)]
    assert item.outcome == "pass" and item.verdicts["in-euros"].reason.startswith("turn 2: ")


def test_a_retry_is_counted_in_its_turn_not_across_turns(tmp_path: Path) -> None:
    """Asked the same question on every turn, with the history dropped, the agent sends the same request on each:
    the next turn asking again is not a retry. The SDK's retry of turn 2's 429, in turn 2, is (junit, HTML, terminal
    read the same count)."""
    same = {"id": "same-question", "turns": [TURNS[0]] * 3}
    with chat_world(tmp_path, HISTORY_DROPPED, [CALM, RATE_LIMITED_ON_TURN_2]) as w:
        w.data["golden_prompts"] = [same]
        w.data["contract"]["invariants"] = [{"id": "answers", "type": "completes", "turn": "all"}]
        result = w.run()
    calm, limited = result.episodes[:2]
    assert (calm.scenario, limited.scenario) == ("no-chaos", "rate-limited-turn-2")
    bodies = {entry["request_body"] for e in (calm, limited) for entry in e.journal}
    assert len(bodies) == 1  # every request of both episodes is the same: method, URL and body
    assert [(entry["turn"], entry["status"]) for entry in limited.journal] == [(1, 200), (2, 429), (2, 200), (3, 200)]
    assert facts.retry_seqs(calm) == set() and facts.retries_seen(result, "no-chaos") == 0
    assert facts.retry_seqs(limited) == {limited.journal[2]["seq"]}  # the SDK's retry of the 429, in turn 2
    assert facts.retries_seen(result, "rate-limited-turn-2") == 1
    out = tmp_path / "out"
    write_reports(result, out, ["junit"])
    suites = {s.get("name"): s for s in ET.parse(out / "junit.xml").getroot().iter("testsuite")}
    seen = {
        name: {p.get("name"): p.get("value") for p in suite.iter("property")}["retries_seen"]
        for name, suite in suites.items()
    }
    assert seen == {"no-chaos": "0", "rate-limited-turn-2": "1"}


def test_a_turn_1_fault_on_a_one_turn_prompt_counts_on_turn_1(tmp_path: Path) -> None:
    """A one-turn prompt's only turn is turn 1 (a `turns: [1]` fault fires on it): the fault's turn counts add up
    to what applied, beside a conversation's turn 1."""
    on_turn_1 = {
        "name": "rate-limited-turn-1",
        "llm_faults": [{"mode": "rate_limit", "retry_after_s": 0, "turns": [1], "times": 1}],
    }
    with chat_world(tmp_path, WITH_HISTORY, [CALM, on_turn_1]) as w:
        w.data["golden_prompts"] = [TURNS[0], {"id": "aapl-in-euros", "turns": TURNS}]
        w.data["contract"]["invariants"] = [{"id": "answers", "type": "completes", "turn": "all"}]
        result = w.run()
    limited = [e for e in result.episodes if e.scenario == "rate-limited-turn-1"]
    assert [[entry["status"] for entry in e.journal] for e in limited] == [[429, 200], [429, 200, 200, 200]]
    [coverage] = [c for c in result.coverage if c.scenario == "rate-limited-turn-1"]
    [fault] = coverage.faults
    assert (coverage.applied, fault.applied, fault.applied_turns) == (2, 2, {1: 2})
    assert "llm_faults[0] rate_limit: applied on turn 1 x2" in render_terminal(result)
    saved = load_result(tmp_path / "out" / "results.json").coverage
    assert [f.applied_turns for c in saved for f in c.faults if c.scenario == "rate-limited-turn-1"] == [{1: 2}]


def _hanging_agent(seen: list[str]) -> list[Any]:
    """An agent that answers 'hang' only 2 s on (well past timeout_ms) and 'fail' with the HTTP error 500."""
    from aiohttp import web

    async def reset(request: web.Request) -> web.Response:
        return web.json_response({})

    async def chat(request: web.Request) -> web.Response:
        message = (await request.json())["message"]
        seen.append(message)
        if message == "hang":
            await asyncio.sleep(2)
        if message == "fail":
            return web.json_response({"error": "model down"}, status=500)
        return web.json_response({"reply": f"you said {message}"})

    return [web.post("/chat", chat), web.post("/reset", reset)]


def test_a_turn_with_no_reply_breaks_the_conversation_and_an_error_reply_does_not(tmp_path: Path) -> None:
    """A new user's trial: an http agent whose turn 1 timed out still got turns 2 and 3 (9 s a conversation at
    timeout_ms 3000, ~20 minutes for a modest matrix at the 30 s default). A turn with no reply leaves what the
    agent holds unknown: the later turns are not sent, recorded as not sent with the reason, their checks ERROR.
    A turn the agent answered with an error is a reply: the conversation goes on (does it recover?)."""
    seen: list[str] = []
    with running_app(_hanging_agent(seen), "hang-agent") as agent:
        data = {
            "version": "2.0",
            "agent": {"type": "http", "endpoint": f"{agent}/chat", "request_template": {"message": "{prompt}"},
                      "response_path": "$.reply", "timeout_ms": 400, "reset_endpoint": f"{agent}/reset"},
            "golden_prompts": [{"id": "hangs", "turns": ["hang", "two", "three"]},
                               {"id": "recovers", "turns": ["fail", "two", "three"]}],
            "contract": {"name": "c", "invariants": [
                {"id": "says", "type": "regex", "pattern": "you said", "turn": "all"},
                {"id": "last", "type": "regex", "pattern": "three", "turn": "last"}]},
            "chaos_matrix": [CALM],
            "run": {"output": str(tmp_path / "out")},
        }  # fmt: skip
        config = tmp_path / "flakeproxy.yaml"
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        result = asyncio.run(run_contract_async(load_config(config), str(config), tmp_path / "out"))
    assert seen.count("hang") == 1 and seen.count("fail") == 1 and seen.count("two") == 1  # "recovers" went on
    hangs = next(e for e in result.episodes if e.prompt == "hangs")
    assert hangs.transcript is not None and [t.sent for t in hangs.transcript] == [True, False, False]
    why = "not sent: turn 1 got no reply (agent timed out after 400 ms), so the conversation stopped there"
    assert [t.error for t in hangs.transcript] == ["agent timed out after 400 ms", why, why]
    assert hangs.error == why and hangs.latency_ms < 1200  # one timeout, not three
    recovers = next(e for e in result.episodes if e.prompt == "recovers")
    assert recovers.transcript is not None and all(t.sent for t in recovers.transcript)
    assert [t.answer for t in recovers.transcript] == [None, "you said two", "you said three"]
    assert result.agent_invocations == 1 + 3  # the turns sent, not the 6 of the two conversations
    last = next(c for c in result.cells if c.invariant == "last")
    verdict = next(v for v in last.verdicts if v.episode == hangs.id)
    assert (verdict.outcome, verdict.reason) == ("error", f"turn 3: {why}")


def test_a_prompt_no_fault_of_a_scenario_can_reach_is_not_run_there(tmp_path: Path) -> None:
    """A trial's `turns: [2]` scenario ran its one-turn prompt too: a calm run under its name, paid for, whose
    PASS counted as one under the fault. Now such a prompt is not run there, and a check that has only such
    prompts is n/a saying why."""
    quick = {"id": "quick", "type": "regex", "pattern": "AAPL", "probes": ["What is AAPL trading at?"]}
    with chat_world(tmp_path, WITH_HISTORY, [CALM, RATE_LIMITED_ON_TURN_2]) as w:
        w.data["golden_prompts"].append("What is AAPL trading at?")
        w.data["contract"]["invariants"] = [*INVARIANTS, quick]
        result = w.run()
    by_scenario = {s: [e for e in result.episodes if e.scenario == s] for s in ("no-chaos", "rate-limited-turn-2")}
    assert len(by_scenario["no-chaos"]) == 2  # the conversation and the one-turn prompt, both calm
    [faulted] = by_scenario["rate-limited-turn-2"]
    assert faulted.turns == TURNS  # the conversation alone: the one-turn prompt cannot reach turn 2
    cells = {(c.invariant, c.scenario): c for c in result.cells}
    assert cells[("answers", "rate-limited-turn-2")].episodes == [faulted.id]
    assert cells[("answers", "rate-limited-turn-2")].outcome == "pass"
    skipped = cells[("quick", "rate-limited-turn-2")]
    assert skipped.outcome == "not_applicable" and skipped.reason == (
        "its faults act from turn 2 on, and none of this check's prompts has that many turns: nothing of this "
        "scenario could reach them, so none ran here"
    )
    assert cells[("quick", "no-chaos")].outcome == "pass"
