"""A broken world is not the agent's fault: a listener's upstream that refuses every calm request stops the run
(exit 3, one line naming it), so does an agent that answered no calm episode (it timed out, or nothing its
response_path could read), and a fault on a target the agent never called says so instead of "check targets".
Real proxy, real upstream, real agent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml

from tests.runner.world import INVARIANTS, MATRIX, TARGETS, cli, run, world
from tests.support.failing import Script
from tests.support.loops import free_port, running_app
from tests.support.upstream import RunningUpstream

COMPLETES = {"id": "answers", "type": "completes", "severity": "critical"}


def test_an_llm_upstream_that_refuses_every_calm_request_exits_3_naming_it(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there: every connect is refused
    with world(tmp_path) as w:
        w.data["proxy"]["listeners"][1]["upstream"] = dead
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        out = cli(w.config)
        invocations = w.agent.invocations
    assert out.returncode == 3, out.stdout + out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: the upstream of listener llm ({dead}) failed every request of the calm scenario "
                           "no-chaos (1): "), last  # fmt: skip
    assert "Connect call failed" in last and "Traceback" not in out.stderr
    assert invocations == 1, "the run went on past the calm scenario"
    partial = json.loads((tmp_path / "out" / "results.json").read_text())
    assert partial["complete"] is False and partial["score"] is None
    assert partial["interrupted_by"].startswith("InfrastructureError: the upstream of listener llm")
    assert not [c for c in partial["cells"] if c["outcome"] == "fail"], "a cell blames the agent"
    assert (tmp_path / "out" / "report.html").exists() and (tmp_path / "out" / "junit.xml").exists()


def test_a_tool_upstream_down_in_calm_stops_the_run_though_the_agent_coped(tmp_path: Path) -> None:
    """The careful agent answers without its quote tool: still, nothing about that tool can be judged."""
    dead = f"http://127.0.0.1:{free_port()}"
    with world(tmp_path) as w:
        w.data["proxy"]["listeners"][0]["upstream"] = dead
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        out = cli(w.config)
    assert out.returncode == 3, out.stdout + out.stderr
    assert f"error: the upstream of listener tools ({dead}) failed every request" in out.stderr


def test_a_tool_upstream_answering_503_to_every_calm_request_exits_3_naming_it(tmp_path: Path) -> None:
    """It answered, so the old check (connections only) let the run go on and judge the agent on an outage."""
    with RunningUpstream(script=Script([503], body={"error": "quote feed down"})) as down, world(tmp_path) as w:
        w.data["proxy"]["listeners"][0]["upstream"] = down.url
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        out = cli(w.config)
        invocations = w.agent.invocations
    assert out.returncode == 3, out.stdout + out.stderr
    assert out.stderr.strip().splitlines()[-1] == (
        f"error: the upstream of listener tools ({down.url}) answered every request of the calm scenario no-chaos "
        '(1) with an error, HTTP 503: {"error": "quote feed down"}; nothing the agent does through it can be '
        "judged: 503: the upstream itself is failing (run again once it answers)"
    )
    assert invocations == 1, "the run went on past the calm scenario"


def test_a_tool_upstream_answering_404_to_every_calm_request_only_warns(tmp_path: Path) -> None:
    """An agent may be meant to get a 404 (an unknown item): a warning with the fix, and the run goes on."""
    with RunningUpstream(script=Script([404], body={"detail": "Not Found"})) as missing, world(tmp_path) as w:
        w.data["proxy"]["listeners"][0]["upstream"] = missing.url
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        result = run(w.config)
    assert [w for w in result.warnings if "upstream of listener" in w] == [
        f"the upstream of listener tools ({missing.url}) answered every request of the calm scenario no-chaos (1) "
        'with an error, HTTP 404: {"detail": "Not Found"}; unless the agent is meant to get that, verdicts show '
        "that upstream, not the agent: 404: check the agent's URL for it (its path)"
    ]
    assert result.complete and {c.scenario for c in result.cells} == {s["name"] for s in MATRIX}


def test_a_response_path_that_reads_no_calm_answer_stops_the_run_naming_it(tmp_path: Path) -> None:
    """No calm answer could be read: nothing can be judged, so the run stops at calm, blaming nothing."""
    with world(tmp_path, invariants=[COMPLETES, *INVARIANTS]) as w:
        w.data["agent"]["response_path"] = "$.replly"
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        out = cli(w.config)
        invocations = w.agent.invocations
    assert out.returncode == 3, out.stdout + out.stderr
    line = "agent.response_path $.replly matched nothing in the calm answers; the bodies have keys: reply, error"
    assert out.stderr.strip().splitlines()[-1].endswith(f"{line}; fix agent.response_path"), out.stderr
    assert invocations == 1, "the run went on past the calm scenario"
    partial = json.loads((tmp_path / "out" / "results.json").read_text())
    assert not [c for c in partial["cells"] if c["outcome"] == "fail"], "a cell blames the agent"


def test_an_agent_that_times_out_on_every_calm_episode_stops_the_run_at_calm(tmp_path: Path) -> None:
    """A trial's agent hung on every calm episode: the whole matrix ran anyway (12 episodes x the timeout, about 12
    minutes at init's timeout_ms), printing 147 ERROR rows, then exit 1. Now: exit 3 after the calm episodes, one
    line with how many, the first error and the fix."""
    with world(tmp_path, delay_s=2.0) as w:
        w.data["agent"]["timeout_ms"] = 200
        conversation = {"id": "two-quotes", "turns": ["What is AAPL trading at?", "And MSFT?"]}
        w.data["golden_prompts"] = [conversation, "What is MSFT trading at?"]  # its turn 2 is never sent
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        out = cli(w.config)
        invocations = w.agent.invocations
    assert out.returncode == 3, out.stdout + out.stderr
    assert out.stderr.strip().splitlines()[-1] == (
        "error: the agent answered none of the 2 episodes of the calm scenario no-chaos, each an agent error, the "
        "first: agent timed out after 200 ms; nothing it does can be judged against a world in which it never "
        "worked: raise agent.timeout_ms (now 200) if the agent is only slow, else see in the agent's logs why it hangs"
    ), out.stderr
    assert invocations == 2, f"{invocations} invocations: the run went on past the calm scenario's 2 episodes"
    assert "Traceback" not in out.stderr and "ERROR" not in out.stdout
    partial = json.loads((tmp_path / "out" / "results.json").read_text())
    assert partial["complete"] is False and partial["interrupted_by"].startswith("InfrastructureError: the agent")


def test_a_fault_on_a_target_the_agent_never_called_says_so_not_check_targets(tmp_path: Path) -> None:
    matrix = [
        {"name": "no-chaos"},
        {"name": "news-down", "tool_faults": [{"tool": "news_api", "mode": "error", "error_code": 503}]},
        {"name": "typo-down", "tool_faults": [{"tool": "quotes_typo", "mode": "error", "error_code": 503}]},
    ]
    with world(tmp_path, matrix=matrix) as w:
        w.data["proxy"]["listeners"].append(
            {"name": "news", "listen": f"127.0.0.1:{free_port()}", "upstream": w.upstream.url}
        )
        w.data["targets"] = {
            **TARGETS,
            "news_api": {"listener": "news"},  # a listener the agent never calls
            "quotes_typo": {"listener": "tools", "path": "/v1/quote-typo*"},  # called, but matches no request
        }
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        result = run(w.config)
    news = next(n for n in result.warnings if "scenario news-down" in n)
    listen = w.data["proxy"]["listeners"][-1]["listen"]
    assert news == (
        "scenario news-down injected nothing in 1 episode(s) (decided 0, applied 0): its episodes made no request "
        f"to news_api: the agent never called it through listener news at {listen} (it answered without it, hung, "
        "or failed before it: see their answers and journals; or it called it directly, not through the proxy: its "
        f"URL for it must point at listener news, http://{listen})"
    )
    typo = next(n for n in result.warnings if "scenario typo-down" in n)
    assert typo.endswith("no request matched its faults; check targets"), typo
    cell = next(c for c in result.cells if c.scenario == "news-down" and c.when == "tool_faults_active")
    assert cell.outcome == "error" and "made no request to news_api" in cell.reason, cell.reason
    assert "check the targets" not in cell.reason


def test_an_agent_calling_its_tool_directly_is_told_to_point_it_at_the_listener(tmp_path: Path) -> None:
    """Its tool URL is the real API's: the tool fault never fires, and the note says how to route it."""
    with world(tmp_path, bypass=True) as w:
        result = run(w.config)
        listen = w.data["proxy"]["listeners"][0]["listen"]
        assert w.upstream.count("/v1/quotes") == 3  # the agent did call its tool, in every scenario
    note = next(n for n in result.warnings if "scenario search-tool-down" in n)
    assert note == (
        "scenario search-tool-down injected nothing in 1 episode(s) (decided 0, applied 0): its episodes made no "
        f"request to market_data_api: the agent never called it through listener tools at {listen} (it answered "
        "without it, hung, or failed before it: see their answers and journals; or it called it directly, not "
        f"through the proxy: its URL for it must point at listener tools, http://{listen})"
    )
    cell = next(c for c in result.cells if c.scenario == "search-tool-down" and c.when == "tool_faults_active")
    assert cell.outcome == "error" and f"its URL for it must point at listener tools, http://{listen}" in cell.reason


def test_a_fault_whose_after_calls_the_agent_never_reaches_says_so_not_check_targets(tmp_path: Path) -> None:
    """A trial's `after_calls: 5` on a tool the agent called once an episode: the request matched the target, yet
    the warning said "no request matched its faults; check targets". Now it says what the journals show."""
    late = {"tool": "market_data_api", "mode": "error", "error_code": 503, "after_calls": 5}
    matrix = [{"name": "no-chaos"}, {"name": "tool-late", "tool_faults": [late]}]
    with world(tmp_path, matrix=matrix) as w:
        result = run(w.config)
        assert w.upstream.count("/v1/quotes") == 2  # once an episode, calm and tool-late
    note = next(n for n in result.warnings if "scenario tool-late" in n)
    assert note == (
        "scenario tool-late injected nothing in 1 episode(s) (decided 0, applied 0): the agent made at most 1 "
        "matching call(s) to market_data_api per episode, but tool_faults[0] error has after_calls: 5, which lets "
        "the first 4 of an episode through: lower after_calls to 1"
    )
    cell = next(c for c in result.cells if c.scenario == "tool-late" and c.when == "tool_faults_active")
    assert cell.outcome == "error" and "after_calls: 5" in cell.reason and "check the targets" not in cell.reason


def test_a_traffic_check_cannot_pass_an_episode_whose_agent_timed_out(tmp_path: Path) -> None:
    """The tool hangs past the agent's timeout: the runner ends the episode while the agent is still calling, so
    `max_tool_calls` saw only the calls made until then. ERROR, not PASS (a trial's timed-out episode PASSed)."""
    invariants = [
        {"id": "few-quote-calls", "type": "max_tool_calls", "max": 2, "targets": ["market_data_api"]},
        {"id": "answers", "type": "completes"},
        {"id": "waits", "type": "retry_after_respected", "target": "llm"},
    ]
    hang = {"tool": "market_data_api", "mode": "timeout", "delay_ms": 3000}
    matrix = [{"name": "no-chaos"}, {"name": "tool-hangs", "tool_faults": [hang]}]
    with world(tmp_path, invariants=invariants, matrix=matrix) as w:
        w.data["agent"]["timeout_ms"] = 1000
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        result = run(w.config)
    cells = {(c.invariant, c.scenario): c for c in result.cells}
    assert cells[("few-quote-calls", "no-chaos")].outcome == "pass"
    hung = cells[("few-quote-calls", "tool-hangs")]
    assert hung.outcome == "error", hung.reason
    assert hung.reason == (
        "agent error: agent timed out after 1000 ms; what it called after the episode ended was not seen, so its "
        "traffic cannot pass (seen: at most 2 calls per target (market_data_api; max 2))"
    )  # the hung call and the SDK's retry once it timed out: the runner waited for the agent to stop calling
    [episode] = [e for e in result.episodes if e.scenario == "tool-hangs"]
    calm = [e for e in result.episodes if e.scenario == "no-chaos"]
    assert episode.lost and not any(e.lost for e in calm)
    # an n/a that rests on what the journal lacks (a trial's "the agent did not retry" on a killed agent) is no
    # more seen than a pass
    assert cells[("waits", "no-chaos")].outcome == "not_applicable"
    waits = cells[("waits", "tool-hangs")]
    assert waits.outcome == "error" and "so its traffic cannot be n/a (seen: " in waits.reason, waits.reason


def test_a_timed_out_agents_late_calls_stay_in_its_own_episode(tmp_path: Path) -> None:
    """A trial's agent went on working after the runner's timeout: its next LLM call landed in the next episode,
    got that episode's 503 and FAILed its call count. With episodes one at a time (no header to tell them apart)
    the runner now keeps a lost episode open until its agent stops calling: the late call is its own."""
    invariants = [
        {"id": "one-llm-call", "type": "call_count", "target": "llm", "max": 1},
        {"id": "answers", "type": "completes"},
    ]
    slow = {"tool": "market_data_api", "mode": "slow", "delay_ms": 1500}
    matrix = [{"name": "no-chaos"}, {"name": "tool-slow", "tool_faults": [slow]},
              {"name": "llm-down", "llm_faults": [{"mode": "error", "error_code": 503}]}]  # fmt: skip
    with world(tmp_path, invariants=invariants, matrix=matrix) as w:
        w.data["agent"]["timeout_ms"] = 1000
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        result = run(w.config)
        assert w.upstream.count("/v1/chat/completions") == 2  # calm's, tool-slow's late one; llm-down's got a 503
    by = {e.scenario: e for e in result.episodes}
    late, down = by["tool-slow"], by["llm-down"]
    assert late.lost and late.late_requests == 1 and not late.still_calling
    assert [(e["url"].rsplit("/", 1)[-1], e["status"]) for e in late.journal] == [
        ("quotes?symbol=AAPL", 200), ("completions", 200)]  # fmt: skip
    assert [e["status"] for e in down.journal if e["url"].endswith("/completions")] == [503]  # its own call alone
    cells = {(c.invariant, c.scenario): c for c in result.cells}
    assert cells[("one-llm-call", "llm-down")].outcome == "pass"
    assert cells[("one-llm-call", "tool-slow")].outcome == "error"  # lost: its traffic cannot pass
    said = next(n for n in result.warnings if f"episode {late.id}" in n)
    assert said.endswith(
        "its agent gave no reply, then went on calling; its 1 late request(s) are kept in this episode; the runner "
        "waited for it to stop before the next episode"
    )


def test_a_late_call_naming_its_ended_episode_is_no_other_episodes(tmp_path: Path) -> None:
    """With header attribution a timed-out agent's late call still names its episode: the proxy gave it to the
    only episode open (a trial's retries got the next episode's 500s and FAILed its retry bound). Now it is none's,
    unbroken, counted on the episode it names, and said. The agent thinks 1.5 s (past its 1 s) before it calls
    on a prompt that says "slow"."""
    from aiohttp import ClientSession, web

    tools: dict[str, str] = {}

    async def chat(request: web.Request) -> web.Response:
        message, cell = (await request.json())["message"], request.headers["x-flakeproxy-cell"]
        if "slow" in message:
            await asyncio.sleep(1.5)
        async with (
            ClientSession() as http,
            http.get(f"{tools['url']}/v1/quotes", headers={"x-flakeproxy-cell": cell}) as r,
        ):
            return web.json_response({"reply": f"the quote service said {r.status}"})

    once = {"id": "quotes-once", "type": "call_count", "target": "market_data_api", "max": 1}
    invariants = [{"id": "answers", "type": "completes"}, once]
    matrix = [
        {"name": "no-chaos"},
        {"name": "tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error"}]},
    ]
    by_header = {"attribution": "header"}
    with (
        running_app([web.post("/chat", chat)], "late-agent") as agent,
        world(tmp_path, invariants=invariants, matrix=matrix, run=by_header) as w,
    ):
        tools["url"] = "http://" + w.data["proxy"]["listeners"][0]["listen"]
        w.data["agent"] = {"type": "http", "endpoint": f"{agent}/chat", "request_template": {"message": "{prompt}"},
                           "response_path": "$.reply", "timeout_ms": 1000}  # fmt: skip
        w.data["golden_prompts"] = ["quick: AAPL?", "slow: AAPL?"]
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        result = run(w.config)
    by = {(e.scenario, e.prompt_index): e for e in result.episodes}
    calm_slow, down_slow = by[("no-chaos", 1)], by[("tool-down", 1)]
    assert calm_slow.lost and down_slow.lost and calm_slow.late_requests == 0  # header attribution: no wait
    assert down_slow.journal == []  # the calm episode's late call, made while this one ran, is not its own
    late = [e for e in result.unattributed_journal if e.get("named_episode") == calm_slow.cell_id]
    assert [(e["url"].rsplit("/", 1)[-1], e["status"], e["fault"]) for e in late] == [("quotes", 200, None)]
    assert calm_slow.late_unattributed == 1
    said = next(n for n in result.warnings if "named an episode of this run after it had ended" in n)
    assert f"({calm_slow.id} ({calm_slow.label}))" in said


def test_a_calm_run_that_sent_nothing_through_the_proxy_says_where_the_agent_must_point(tmp_path: Path) -> None:
    """A trial's agent had its base URL at a dead port: it answered "Sorry" in every episode, the calm ones PASSed,
    and only each chaos scenario's "injected nothing" hinted why. The calm scenario now says it."""
    from aiohttp import ClientError, ClientSession, web

    dead = f"http://127.0.0.1:{free_port()}"  # where the agent was told its quote API is: nothing listens

    async def chat(request: web.Request) -> web.Response:
        try:
            async with ClientSession() as http, http.get(f"{dead}/v1/quotes") as r:
                return web.json_response({"reply": f"according to the feed: {await r.text()}"})
        except ClientError:
            return web.json_response({"reply": "Sorry, no price right now (source: none)"})

    matrix = [
        {"name": "no-chaos"},
        {"name": "tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error"}]},
    ]
    with running_app([web.post("/chat", chat)], "lost-agent") as agent, world(tmp_path, matrix=matrix) as w:
        w.data["agent"] = {"type": "http", "endpoint": f"{agent}/chat", "request_template": {"message": "{prompt}"},
                           "response_path": "$.reply"}  # fmt: skip
        w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
        result = run(w.config)
    listeners = w.data["proxy"]["listeners"]
    said = next(n for n in result.warnings if "went through the proxy" in n)
    assert said == (
        "not one request of the calm scenario no-chaos went through the proxy (1 episode(s), each answered "
        "without one): if the agent calls an LLM or a tool, it is not pointed at flakeproxy, and no fault can reach "
        f"it; its base URLs must be the listeners: tools (http://{listeners[0]['listen']}), "
        f"llm (http://{listeners[1]['listen']})"
    )
    assert result.score is not None and result.score.verdict == "FAIL"  # tool-down injected nothing
