"""Issue 25 in a contract run: each episode's and scenario's spend in results.json, read from the usage the fake
LLM reported through the real proxy, and run.budget stopping a run early with its partial results (exit 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.runner.world import cli, run, world
from tests.support.fake_usage import completion_tokens, prompt_tokens

MATRIX = [
    {"name": "no-chaos"},
    {"name": "search-tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}]},
    {"name": "llm-limited", "llm_faults": [{"mode": "rate_limit", "retry_after_s": 0}]},
]
INVARIANTS = [
    {"id": "tokens", "type": "amplification", "max_factor": 2, "severity": "high"},
    {"id": "calls", "type": "amplification", "max_factor": 2, "measure": "llm_calls", "severity": "high"},
    {"id": "cost", "type": "cost_budget", "max_usd": 0.01, "severity": "high"},
]


PRICING = {
    "as_of": "2026-11-20",
    "defaults": False,
    "models": {"m*": {"input_usd_per_mtok": 1, "output_usd_per_mtok": 2}},
}


def test_each_episode_and_scenario_says_what_it_spent(tmp_path: Path) -> None:
    with world(tmp_path, "careful", invariants=INVARIANTS, matrix=MATRIX, run={"replicas": 2}) as w:
        w.config.write_text(yaml.safe_dump({**w.data, "pricing": PRICING}, sort_keys=False))
        result = run(w.config)
        sent = [json.loads(seen.body) for seen in w.upstream.requests if seen.path == "/v1/chat/completions"]
    calm = [e for e in result.episodes if e.scenario == "no-chaos"]
    assert len(sent) == 2 and [e.spend.llm_calls for e in calm if e.spend] == [1, 1]
    for episode, body in zip(calm, sent, strict=True):
        assert episode.spend is not None and episode.spend.exact
        assert (episode.spend.input_tokens, episode.spend.output_tokens) == (
            prompt_tokens(body),
            completion_tokens(body),
        )
        assert episode.spend.tool_calls == {"market_data_api": 1}
        assert episode.spend.cost_usd == pytest.approx(
            (prompt_tokens(body) + completion_tokens(body) * 2) / 1e6, rel=1e-12
        )
    by = {s.scenario: s for s in result.spend}
    assert by["no-chaos"].calm and by["no-chaos"].amplification["tokens"] == 1.0
    assert by["no-chaos"].total.input_tokens == sum(prompt_tokens(b) for b in sent)
    assert by["search-tool-down"].total.llm_calls == 0 and by["search-tool-down"].amplification["llm_calls"] == 0.0
    limited = by["llm-limited"]  # the proxy answered 429 itself: a call, not billed (known 0 tokens)
    assert (limited.total.llm_calls, limited.total.total_tokens, limited.total.unknown_calls) == (2, 0, 0)
    assert limited.amplification == {"tokens": 0.0, "llm_calls": 1.0, "tool_calls": 1.0, "cost": 0.0}
    assert result.pricing_as_of == "2026-11-20"
    cells = {(c.invariant, c.scenario): c.outcome for c in result.cells}
    assert cells[("tokens", "no-chaos")] == "pass" and cells[("calls", "search-tool-down")] == "pass"
    assert cells[("cost", "no-chaos")] == "pass" and cells[("cost", "search-tool-down")] == "not_applicable"


@pytest.mark.proxy_child  # contract run, end to end
def test_a_run_budget_of_10_llm_calls_stops_a_40_episode_run_with_exit_5(tmp_path: Path) -> None:
    budget = {"replicas": 40, "budget": {"llm_calls": 10}}
    with world(tmp_path, "careful", matrix=MATRIX[:1], run=budget) as w:
        out = cli(w.config)
        calls = w.upstream.count("/v1/chat/completions")
    assert out.returncode == 5, out.stderr
    assert "the run budget was crossed (run.budget.llm_calls: 11 LLM calls, more than 10)" in out.stderr
    assert "[11/40] no-chaos" in out.stderr and "[12/40]" not in out.stderr
    assert "; run so far: 11 LLM calls, " in out.stderr  # progress lines show the run's spend so far
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert not data["complete"] and len(data["episodes"]) == 11 == calls
    assert data["budget_crossed"] == "run.budget.llm_calls: 11 LLM calls, more than 10"
    assert data["spend"][0]["total"]["llm_calls"] == 11
    assert (tmp_path / "out" / "junit.xml").exists() and (tmp_path / "out" / "report.html").exists()
    # as a finished run does: the matrix so far on stdout, the files written, then the error line
    assert out.stdout.startswith("contract ") and "no-chaos" in out.stdout.splitlines()[2], out.stdout
    reports = ("results.json", "junit.xml", "report.html", "summary.md")
    assert out.stderr.strip().splitlines()[-2] == "wrote " + ", ".join(str(tmp_path / "out" / f) for f in reports)


def test_a_run_stopped_by_its_budget_keeps_its_coverage_and_its_whole_spend(tmp_path: Path) -> None:
    """What applied before the stop is in results.json (the chaos scenario is not shown as calm), and the whole
    run's spend is what the budget counted, calm baseline episodes included."""
    matrix = [MATRIX[2]]  # the proxy answers 429 to the LLM: no calm scenario, so amplification plans baselines
    invariants = [{"id": "tokens", "type": "amplification", "max_factor": 2, "severity": "high"}]
    budget = {"replicas": 3, "budget": {"llm_calls": 4}}  # 3 calm baselines (1 call each), then the 429s
    with world(tmp_path, "careful", invariants=invariants, matrix=matrix, run=budget) as w:
        out = cli(w.config)
    assert out.returncode == 5, out.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    crossed = int(data["budget_crossed"].split(": ")[1].split()[0])
    assert data["spend_total"]["llm_calls"] == crossed > 4
    assert sum(row["total"]["llm_calls"] for row in data["spend"]) < crossed  # the baselines are in no row
    [limited] = data["coverage"]
    assert limited["scenario"] == "llm-limited" and limited["applied"] >= 1, limited
    terminal = (tmp_path / "out" / "summary.md").read_text()
    assert "| whole run |" in terminal


@pytest.mark.proxy_child  # contract run, end to end
def test_llm_calls_no_episode_could_be_tied_to_count_in_the_run_and_cross_its_budget(tmp_path: Path) -> None:
    """Three episodes at once (attribution: header) and an agent on the openai SDK that does not forward
    x-flakeproxy-cell, whose calls are all made while the three are open: no request can be attributed, yet this run
    made them. The run's spend and run.budget count them, said to be unattributed; no scenario's row does."""
    pytest.importorskip("openai")
    from tests.support.sdk_agent import sdk_world

    budget = {"replicas": 9, "concurrency": 3, "attribution": "header", "budget": {"llm_calls": 4}}
    matrix = [{"name": "no-chaos"}]
    with sdk_world(tmp_path, [{"id": "answers", "type": "completes"}], matrix, budget, PRICING, together=3) as world:
        config, _sdk, up = world
        out = cli(config)
        sent = [json.loads(seen.body) for seen in up.requests if seen.path == "/v1/chat/completions"]
    assert out.returncode == 5, out.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    calls = len(sent)
    assert calls in (6, 9) and data["unattributed_requests"] == calls, out.stderr  # two rounds of 3 (or all three)
    crossed = f"run.budget.llm_calls: {calls} LLM calls ({calls} of them unattributed), more than 4"
    assert data["budget_crossed"] == crossed and crossed in out.stderr
    assert "; run so far: 3 LLM calls (of which 3 unattributed), " in out.stderr  # after the first round
    assert "; run so far: 0 LLM calls" not in out.stderr
    loose, total = data["spend_unattributed"], data["spend_total"]
    assert loose["llm_calls"] == total["llm_calls"] == calls and loose["unknown_calls"] == 0
    assert loose["input_tokens"] == total["input_tokens"] == sum(prompt_tokens(b) for b in sent)
    assert total["output_tokens"] == sum(completion_tokens(b) for b in sent)
    assert total["cost_usd"] == pytest.approx(sum(prompt_tokens(b) + 2 * completion_tokens(b) for b in sent) / 1e6)
    [row] = data["spend"]  # no scenario can be told: its row has none of them
    assert row["scenario"] == "no-chaos" and row["total"]["llm_calls"] == 0
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert f"| whole run | {len(data['episodes'])} | {calls} ({calls} unattributed) |" in summary, summary
    assert f"{calls} LLM call(s) and 0 tool call(s) no episode could be tied to count in the whole run" in summary


def _agents_sdk_routes(llm: str, include_usage: bool | None) -> list[Any]:
    """POST /chat {"message"} -> {"reply"}: an OpenAI Agents SDK agent, streamed, on a chat-completions model whose
    base URL is not api.openai.com (the SDK then leaves stream_options.include_usage out, unless told)."""
    from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from aiohttp import web
    from openai import AsyncOpenAI

    set_tracing_disabled(True)

    async def chat(request: web.Request) -> web.Response:
        message = (await request.json())["message"]
        async with AsyncOpenAI(base_url=f"{llm}/v1", api_key="sk-test", max_retries=0, timeout=20) as client:
            model = OpenAIChatCompletionsModel(model="gpt-4.1-mini", openai_client=client)
            settings = ModelSettings(include_usage=include_usage)
            agent = Agent(name="quotes", instructions="Answer.", model=model, model_settings=settings)
            result = Runner.run_streamed(agent, message)
            async for _event in result.stream_events():
                pass
        return web.json_response({"reply": str(result.final_output)})

    async def reset(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    return [web.post("/chat", chat), web.post("/reset", reset)]


@pytest.mark.parametrize("include_usage", [None, True], ids=["sdk-default", "include-usage"])
def test_a_token_budget_that_cannot_count_the_usage_says_why_once(tmp_path: Path, include_usage: bool | None) -> None:
    """The Agents SDK does not ask a non-OpenAI base URL's streams for their usage: every call's is unknown, so
    run.budget.tokens counts nothing and could never be crossed. The run says so once, with the reason and the fix;
    with ModelSettings(include_usage=True) the tokens are counted and nothing is said."""
    pytest.importorskip("agents", reason="openai-agents installs with the dev tools on Python 3.13+ only")
    from tests.support.loops import running_app

    with world(tmp_path, "careful", matrix=MATRIX[:1], run={"replicas": 2, "budget": {"tokens": 100000}}) as w:
        llm = f"http://{w.data['proxy']['listeners'][1]['listen']}"
        with running_app(_agents_sdk_routes(llm, include_usage), "agents-sdk") as url:
            w.data["agent"] |= {"endpoint": f"{url}/chat", "reset_endpoint": f"{url}/reset"}
            w.config.write_text(yaml.safe_dump(w.data, sort_keys=False))
            result = run(w.config)
    assert result.spend_total is not None and result.spend_total.llm_calls == 2
    said = [w for w in result.warnings if "run.budget.tokens" in w]
    if include_usage:
        assert said == [] and result.spend_total.unknown_calls == 0 and result.spend_total.total_tokens > 0
        return
    assert result.spend_total.unknown_calls == 2
    [warning] = said
    assert warning.startswith(
        "run.budget.tokens can count only the usage the providers report, and LLM calls whose usage was not "
        "reported were seen (the first, call #"
    )
    assert "/v1/chat/completions): the stream reported no usage (stream_options.include_usage was not set)" in warning
    assert "they count as 0 tokens and $0, so the budget may be crossed unseen" in warning
    assert warning.endswith(
        "(the OpenAI Agents SDK sets it only for api.openai.com: ModelSettings(include_usage=True))"
    ), warning
