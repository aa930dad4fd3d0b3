"""Slots end to end: K instances of the agent, each reaching the proxy through its own slot's listeners, so
episodes of any scenarios run at once and every request is tied to its episode by the port it came in on
(the agents forward no header). Verdicts equal the one-at-a-time run's with the same seed."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp import web

import flakeproxy
from flakeproxy.results import RunResult
from tests.runner.world import INVARIANTS, TARGETS, run
from tests.support.loops import free_port, running_app
from tests.support.upstream import RunningUpstream

SLOTS = 4
PROMPTS = ["What is AAPL trading at?", "Quote AAPL for me."]
MATRIX = [
    {"name": "calm"},
    {"name": "tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}]},
    {"name": "rate-limited", "tool_faults": [{"tool": "market_data_api", "mode": "rate_limit"}]},
    {"name": "llm-truncated", "llm_faults": [{"mode": "truncated_response", "max_tokens": 3}]},
    {
        "name": "flaky-tool",  # seeded per episode: the same episodes fail in both runs, or the test says so
        "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 502, "probability": 0.5}],
    },
]
#: careful on a failed tool, but makes a price up when rate limited (so cells differ: PASS and FAIL)
AGENT = """
import json, os, sys, time, urllib.error, urllib.parse, urllib.request

slot = sys.argv[1]                   # {slot} in the command
tools = os.environ["TOOLS_URL"]      # {url:tools} in agent.env
llm = os.environ["FLAKEPROXY_URL_LLM"]
http = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, never an outer proxy
prompt = sys.stdin.read().strip()
query = urllib.parse.urlencode({"symbol": "AAPL", "slot": slot})
try:
    with http.open(f"{tools}/v1/quotes?{query}", timeout=10) as r:
        quote, status = json.load(r), 200
except urllib.error.HTTPError as e:
    quote, status = None, e.code
time.sleep(float(os.environ["THINK_S"]))  # the agent's own thinking time between its calls
if quote is None:
    print("AAPL trades at $187.23 according to my sources." if status == 429 else
          "I can't retrieve the current price right now: the market data source is unavailable.")
    sys.exit(0)
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"{prompt} {json.dumps(quote)}"}]})
request = urllib.request.Request(f"{llm}/v1/chat/completions", body.encode(), {"content-type": "application/json"})
try:
    with http.open(request, timeout=10) as r:
        print(json.load(r)["choices"][0]["message"]["content"])
except urllib.error.HTTPError as e:
    print(f"LLM answered HTTP {e.code}", file=sys.stderr)
    sys.exit(2)
"""


def free_range(step: int, taken: set[int]) -> int:
    """A port p such that p + k x step is free for every slot k (and none is in taken)."""
    for _ in range(50):
        base = free_port()
        wanted = {base + k * step for k in range(SLOTS)}
        if max(wanted) <= 65535 and not wanted & taken and all(bindable(p) for p in wanted):
            taken |= wanted
            return base
    raise AssertionError(f"no free range of {SLOTS} ports {step} apart")


def bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def listeners(upstream: str, slots: int, step: int | None = None) -> list[dict[str, Any]]:
    """The tools and llm listeners, each slot of each on its own free port (slot_listen), or (step) at port +
    slot x step in a range checked free."""
    if step is not None:
        taken: set[int] = set()
        return [
            {"name": name, "listen": f"127.0.0.1:{free_range(step, taken)}", "upstream": upstream}
            for name in ("tools", "llm")
        ]
    return [
        {
            "name": name,
            "listen": f"127.0.0.1:{free_port()}",
            "upstream": upstream,
            **({"slot_listen": [f"127.0.0.1:{free_port()}" for _ in range(slots)]} if slots else {}),
        }
        for name in ("tools", "llm")
    ]


def config(
    tmp: Path,
    agent: dict[str, Any],
    upstream: str,
    run_: dict[str, Any],
    matrix: list[dict[str, Any]] = MATRIX,
    step: int | None = None,
) -> Path:
    """A contract run over SLOTS slots: listeners with slot_listen, or (step) placed by slot_port_step."""
    proxy: dict[str, Any] = {"admin": f"127.0.0.1:{free_port()}", "listeners": listeners(upstream, SLOTS, step)}
    proxy |= {"slots": SLOTS} | ({"slot_port_step": step} if step else {})
    data = {
        "version": "2.0",
        "agent": agent,
        "proxy": proxy,
        "targets": TARGETS,
        "golden_prompts": PROMPTS,
        "contract": {"name": "slots", "invariants": INVARIANTS},
        "chaos_matrix": matrix,
        "run": {"seed": 4, **run_},
    }
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def command_agent(tmp: Path, think_s: float) -> dict[str, Any]:
    script = tmp / "agent.py"
    script.write_text(AGENT)
    return {
        "type": "command",
        "command": [sys.executable, str(script), "{slot}"],
        "env": {"TOOLS_URL": "{url:tools}", "THINK_S": str(think_s)},
        "timeout_ms": 30000,
    }


def with_run(path: Path, **run_: Any) -> Path:
    """The same config with other run settings, beside it."""
    data = yaml.safe_load(path.read_text())
    data["run"].update(run_)
    other = path.parent / f"{'-'.join(f'{k}-{v}' for k, v in run_.items())}.yaml"
    other.write_text(yaml.safe_dump(data, sort_keys=False))
    return other


def slot_of(entry: dict[str, Any]) -> str | None:
    """The slot the agent instance says it is ({slot}, in its tool call's query), when the entry is a tool call."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(entry["url"]).query)
    return query.get("slot", [None])[0]


def assert_attributed(result: RunResult) -> dict[str, int]:
    """No request unattributed; each episode's requests in its own cell, all on one slot. Episode id -> slot."""
    assert result.unattributed_requests == 0, result.unattributed_journal
    slots = {}
    for episode in result.episodes:
        assert episode.journal, f"{episode.id} made no call through the proxy"
        assert episode.unattributed == 0
        assert {e["episode"] for e in episode.journal} == {episode.cell_id}, episode.id
        seen = {e["slot"] for e in episode.journal}
        assert len(seen) == 1 and seen <= set(range(SLOTS)), (episode.id, seen)
        slots[episode.id] = seen.pop()
    assert set(slots.values()) == set(range(SLOTS)), "every slot ran episodes"
    return slots


def verdicts(result: RunResult) -> list[tuple[Any, ...]]:
    """Every cell's outcome and its per-episode verdicts, and each episode's answer and faults."""
    cells = [(c.scenario, c.invariant, c.outcome, [(v.episode, v.outcome) for v in c.verdicts]) for c in result.cells]
    episodes = [(e.id, e.scenario, e.answer, e.error, [f.kind for f in e.faults()]) for e in result.episodes]
    return [*cells, *episodes]


def intervals(result: RunResult) -> dict[str, tuple[float, float]]:
    """Episode id -> (first request start, last response end), from the journal's timestamps."""
    out = {}
    for episode in result.episodes:
        starts = [e["started_at"] for e in episode.journal]
        ends = [e["started_at"] + (e["latency_ms"] or 0) / 1000 for e in episode.journal]
        out[episode.id] = (min(starts), max(ends))
    return out


@pytest.mark.timeout(120)
def test_a_command_agent_as_four_slots_is_exact_and_overlaps_scenarios(tmp_path: Path) -> None:
    with RunningUpstream() as up:
        path = config(tmp_path, command_agent(tmp_path, think_s=0.4), up.url, {"attribution": "slots"})
        slotted = run(path, tmp_path / "slots")
        one_at_a_time = run(with_run(path, attribution="none", concurrency=1), tmp_path / "one")

    slots = assert_attributed(slotted)
    for episode in slotted.episodes:  # the instance on slot k was told k ({slot}) and its URLs ({url:tools})
        said = {slot_of(e) for e in episode.journal if e["listener"] == "tools"}
        assert said == {str(slots[episode.id])}, (episode.id, said)
    assert verdicts(slotted) == verdicts(one_at_a_time)
    outcomes = {c.outcome for c in slotted.cells}
    assert {"pass", "fail"} <= outcomes, outcomes  # the comparison covers both, not only passes
    assert [e.error for e in slotted.episodes if e.scenario == "llm-truncated"] == [None, None]
    flaky = [len(e.faults()) for e in slotted.episodes if e.scenario == "flaky-tool"]
    assert sorted(flaky) == [0, 1], flaky  # seed 4: probability 0.5 fires in one episode, the same in both runs

    # episodes of different scenarios ran at once: their request intervals overlap
    spans, scenario = intervals(slotted), {e.id: e.scenario for e in slotted.episodes}
    overlapping = [
        (a, b)
        for a in spans
        for b in spans
        if scenario[a] != scenario[b] and spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1] and a < b
    ]
    assert overlapping, spans
    one_spans = intervals(one_at_a_time)
    order = sorted(one_spans.values())
    assert all(x[1] <= y[0] for x, y in itertools.pairwise(order)), "one at a time never overlaps"
    assert slotted.unattributed_requests == one_at_a_time.unattributed_requests == 0


def replica(tools: str, llm: str, seen: list[str]) -> list[web.RouteDef]:
    """One deployed replica of an agent: it calls its own slot's listeners and forwards no header."""

    async def chat(request: web.Request) -> web.Response:
        message = (await request.json())["message"]
        seen.append(message)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
            async with http.get(f"{tools}/v1/quotes", params={"symbol": "AAPL"}) as r:
                if r.status != 200:
                    return web.json_response({"reply": "The market data source is unavailable, no price."})
                quote = await r.json()
            body = {"model": "m", "messages": [{"role": "user", "content": f"{message} {json.dumps(quote)}"}]}
            async with http.post(f"{llm}/v1/chat/completions", json=body) as r:
                text = (await r.json())["choices"][0]["message"]["content"] if r.status == 200 else "no answer"
        return web.json_response({"reply": text})

    async def reset(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    return [web.post("/chat", chat), web.post("/reset", reset)]


@contextmanager
def replicas(proxy: list[dict[str, Any]]) -> Iterator[tuple[list[str], list[list[str]]]]:
    """One replica per slot, each pointed at its slot's tools and llm listeners; (their URLs, what each saw)."""
    urls, seen = [], [[] for _ in range(SLOTS)]
    with ExitStack() as stack:
        for k in range(SLOTS):
            tools, llm = (f"http://{lst['slot_listen'][k]}" for lst in proxy)
            urls.append(stack.enter_context(running_app(replica(tools, llm, seen[k]), f"replica-{k}")))
        yield urls, seen


@pytest.mark.timeout(90)
def test_an_http_agent_with_one_replica_per_slot_is_exact(tmp_path: Path) -> None:
    with RunningUpstream() as up:
        path = config(tmp_path, {"type": "command", "command": ["true"]}, up.url, {"attribution": "slots"})
        data = yaml.safe_load(path.read_text())
        with replicas(data["proxy"]["listeners"]) as (urls, seen):
            data["agent"] = {
                "type": "http",
                "endpoint": f"{urls[0]}/chat",
                "reset_endpoint": f"{urls[0]}/reset",
                "request_template": {"message": "{prompt}"},
                "response_path": "$.reply",
                "slots": [{"endpoint": f"{u}/chat", "reset_endpoint": f"{u}/reset"} for u in urls],
            }
            path.write_text(yaml.safe_dump(data, sort_keys=False))
            result = run(path, tmp_path / "out")
    slots = assert_attributed(result)
    for episode in result.episodes:  # slot k's episodes went to replica k, and its calls came in on slot k
        assert episode.prompt in seen[slots[episode.id]]
    assert sum(len(s) for s in seen) == len(result.episodes)
    assert {c.outcome for c in result.cells if c.invariant == "never-fabricate-when-tools-fail"} >= {"pass"}


TOLD: list[str] = []  # the tools URLs listener_url() gave the python agent


def ask(prompt: str) -> str:
    """A python agent in slots: it finds its slot's listeners with flakeproxy.listener_url()."""
    tools, llm = flakeproxy.listener_url("tools"), flakeproxy.listener_url("llm")
    assert tools and llm, "listener_url() is set while a slotted episode runs"
    TOLD.append(tools)
    http = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with http.open(f"{tools}/v1/quotes?symbol=AAPL", timeout=10) as r:
            quote = json.load(r)
    except urllib.error.HTTPError:
        return "The market data source is unavailable, no price."
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"{prompt} {json.dumps(quote)}"}]})
    request = urllib.request.Request(f"{llm}/v1/chat/completions", body.encode(), {"content-type": "application/json"})
    with http.open(request, timeout=10) as r:
        return str(json.load(r)["choices"][0]["message"]["content"])


@pytest.mark.timeout(90)
def test_a_python_agent_finds_its_slots_listeners(tmp_path: Path) -> None:
    """Its slots placed by slot_port_step (slot 0 is the listener itself), found with listener_url()."""
    TOLD.clear()
    agent = {"type": "python", "callable": f"{__name__}:ask", "timeout_ms": 20000}
    llm_faults = [{"name": "calm"}] + [s for s in MATRIX if s.get("llm_faults")]  # its tools are not wrapped
    llm_faults += [{"name": "llm-limited", "llm_faults": [{"mode": "rate_limit"}]}]
    with RunningUpstream() as up:
        path = config(tmp_path, agent, up.url, {"attribution": "slots", "replicas": 2}, llm_faults, step=1000)
        result = run(path, tmp_path / "out")
    assert_attributed(result)
    listen = {lst["name"]: lst["listen"] for lst in yaml.safe_load(path.read_text())["proxy"]["listeners"]}
    host, port = listen["tools"].rsplit(":", 1)  # slot k's tools: the listener's own port + k x 1000
    assert set(TOLD) == {f"http://{host}:{int(port) + 1000 * k}" for k in range(SLOTS)}, TOLD
    errors = {e.scenario: e.error for e in result.episodes if e.error}
    assert set(errors) == {"llm-limited"} and "HTTPError" in errors["llm-limited"], errors


def base_yaml(**extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "version": "2.0",
        "agent": {"type": "command", "command": ["true"]},
        "proxy": {
            "admin": "127.0.0.1:18790",
            "listeners": [{"name": "tools", "listen": "127.0.0.1:18701", "upstream": "http://127.0.0.1:9"}],
        },
        "targets": {"quotes": {"listener": "tools", "path": "/v1/quotes*"}},
        "golden_prompts": ["hi"],
        "contract": {"name": "c", "invariants": [{"id": "cite", "type": "regex", "pattern": "source"}]},
        "chaos_matrix": [{"name": "calm"}],
    }
    for key, value in extra.items():
        data[key] = value if key == "agent" else {**data.get(key, {}), **value}
    return data


def validate(tmp: Path, data: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    path = tmp / "f.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return subprocess.run(
        [sys.executable, "-m", "flakeproxy", "validate", "-c", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "NO_COLOR": "1"},
    )


HTTP = {"type": "http", "endpoint": "http://127.0.0.1:9/chat", "request_template": {"m": "{prompt}"}}


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (base_yaml(run={"attribution": "slots"}), "slots needs proxy.slots"),
        (
            base_yaml(
                run={"attribution": "slots"},
                proxy={"slots": 3},
                agent={**HTTP, "slots": [{"endpoint": "http://127.0.0.1:9/chat"}] * 2},
            ),
            "lists 2 replica(s) and proxy.slots is 3",
        ),
        (
            base_yaml(
                proxy={"slots": 2, "listeners": [{"name": "t", "listen": "127.0.0.1:0", "upstream": "http://x:9"}]}
            ),
            "listens on port 0",
        ),
        (base_yaml(proxy={"slots": 6, "slot_port_step": 10000}), "past port 65535"),
        (
            base_yaml(
                proxy={
                    "slots": 2,
                    "listeners": [
                        {
                            "name": "tools",
                            "listen": "127.0.0.1:18701",
                            "upstream": "http://x:9",
                            "slot_listen": ["127.0.0.1:1"],
                        }
                    ],
                }
            ),
            "slot_listen has 1 address(es) and proxy.slots is 2",
        ),
        (base_yaml(run={"attribution": "slots"}, proxy={"slots": 2}, agent=HTTP), "one replica per slot"),
        (  # a trial's resets on every slot and none above them were told "with reset_endpoint set, ..."
            base_yaml(
                agent={
                    **HTTP,
                    "slots": [{"endpoint": "http://127.0.0.1:9/chat", "reset_endpoint": "http://127.0.0.1:9/r"}] * 2,
                }
            ),
            "every entry of slots has a reset_endpoint: set agent.reset_endpoint too",
        ),
        (
            base_yaml(
                agent={
                    **HTTP,
                    "reset_endpoint": "http://127.0.0.1:9/r",
                    "slots": [{"endpoint": "http://127.0.0.1:9/chat"}] * 2,
                }
            ),
            "with reset_endpoint set, give every entry of slots its own reset_endpoint",
        ),
        (  # slot 1 of 'a' at its port + 1 lands on listener 'b': the message says which two, and the fix
            base_yaml(
                proxy={
                    "slots": 2,
                    "slot_port_step": 1,
                    "listeners": [
                        {"name": "a", "listen": "127.0.0.1:18701", "upstream": "http://x:9"},
                        {"name": "b", "listen": "127.0.0.1:18702", "upstream": "http://x:9"},
                    ],
                }
            ),
            "address 127.0.0.1:18702 is used twice (listener 'b' and slot 1 of 'a'); each listener needs its own "
            "port; raise proxy.slot_port_step or give slot_listen",
        ),
        (  # a misspelt listener would reach the agent as the literal text: its calls would go nowhere
            base_yaml(agent={"type": "command", "command": ["node", "a.js"], "env": {"TOOLS_URL": "{url:tool}"}}),
            "agent.env.TOOLS_URL: {url:tool} names no listener; valid: tools",
        ),
        (base_yaml(agent={"type": "command", "command": ["a", "--llm={url:llm}/v1"]}), "agent.command[1]: {url:llm}"),
    ],
)
def test_slot_config_errors_are_one_line(tmp_path: Path, data: dict[str, Any], says: str) -> None:
    out = validate(tmp_path, data)
    assert out.returncode == 2, out.stdout + out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and says in out.stderr, out.stderr


def test_validate_mentions_the_slots_and_warns_on_unattributed_concurrency(tmp_path: Path) -> None:
    slotted = validate(tmp_path, base_yaml(run={"attribution": "slots"}, proxy={"slots": 4}))
    assert slotted.returncode == 0, slotted.stderr
    assert "4 slots" in slotted.stdout and "ignored" not in slotted.stderr
    unused = validate(tmp_path, base_yaml(run={"attribution": "trace"}, proxy={"slots": 4}))
    assert unused.returncode == 0 and "no episode runs on a slot; set run.attribution: slots" in unused.stderr
    sidecar = validate(tmp_path, base_yaml(proxy={"slots": 3}))  # a trial's sidecar config said nothing of its slots
    assert sidecar.returncode == 0 and sidecar.stdout.rstrip().endswith(", 3 slots of listeners)"), sidecar.stdout
    unattributed = validate(tmp_path, base_yaml(run={"concurrency": 4}))
    assert unattributed.returncode == 0
    warning = [line for line in unattributed.stderr.splitlines() if "run.concurrency 4 ignored" in line]
    assert len(warning) == 1 and "slots" in warning[0], unattributed.stderr
    needless = validate(tmp_path, base_yaml(run={"attribution": "slots", "concurrency": 2}, proxy={"slots": 4}))
    assert "run.concurrency 2 ignored" in needless.stderr and "4 at once" in needless.stderr


ORDER: dict[str, asyncio.Event] = {}


async def second_first(prompt: str) -> str:
    """The first prompt answers only once the second has: episodes finish in reverse plan order."""
    answered = ORDER.setdefault("second", asyncio.Event())
    if prompt == "second":
        answered.set()
    else:
        await asyncio.wait_for(answered.wait(), 10)
    return f"{prompt}, says the source"


def fresh() -> None:
    """A reset: nothing to clear (and no stateful check episode in the plan)."""


@pytest.mark.timeout(60)
def test_verdicts_are_in_plan_order_whatever_order_episodes_finish(tmp_path: Path) -> None:
    """Bug: a cell's verdicts (and coverage) followed the order episodes finished in, so two runs of one config
    at concurrency > 1 wrote different results.json."""
    ORDER.clear()
    data = {
        "version": "2.0",
        "agent": {"type": "python", "callable": f"{__name__}:second_first", "reset_function": f"{__name__}:fresh"},
        "golden_prompts": ["first", "second"],
        "contract": {"name": "order", "invariants": [{"id": "cite", "type": "regex", "pattern": "source"}]},
        "chaos_matrix": [{"name": "calm"}],
        "run": {"concurrency": 2},
    }
    path = tmp_path / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = run(path, tmp_path / "out")
    assert [e.error for e in result.episodes] == [None, None]
    assert [(v.episode, v.prompt) for v in result.cells[0].verdicts] == [("e1", "first"), ("e2", "second")]
