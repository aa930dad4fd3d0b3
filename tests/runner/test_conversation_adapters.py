"""Each adapter carries a conversation to a real agent: {session} and {messages} over HTTP, one process per
episode reading a turn per line (with its timeout per turn), one process per turn with FLAKEPROXY_SESSION, and a
Python callable that asks for the history by name; one-argument callables and one-turn prompts as before."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from flakeproxy.config import load_config
from flakeproxy.config.agent import CommandAgent, HttpAgent, PythonAgent
from flakeproxy.results import Episode
from flakeproxy.runner.agents.base import Agent, Invocation
from flakeproxy.runner.agents.command import CommandAdapter
from flakeproxy.runner.agents.http import HttpAdapter
from flakeproxy.runner.agents.python import PythonAdapter
from flakeproxy.runner.conversation import Exchange, converse, new_session
from flakeproxy.runner.engine import run_contract_async
from tests.support.loops import running_app

TURNS = ["first", "second\nline", "third"]


def _episode(turns: list[str] | None) -> Episode:
    return Episode(id="e1", scenario=None, prompt="p", prompt_index=0, label="l", turns=turns)


async def _converse(agent: Agent, turns: list[str] | None = TURNS, session: str = "fp-s1") -> Exchange:
    await agent.start()
    try:
        return await converse(agent, [], _episode(turns), Invocation(cell="e1", session=session))
    finally:
        await agent.close()


def _answers(exchange: Exchange) -> list[str | None]:
    assert exchange.turns is not None
    return [reply.text if reply.text is not None else reply.error for _, reply in exchange.turns]


def test_http_session_in_endpoint_headers_and_template_and_messages_in_the_body() -> None:
    seen: list[tuple[str, str, Any]] = []

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((request.match_info["thread"], request.headers["x-session"], body))
        return web.json_response({"reply": f"answer {len(body['messages'])}"})

    with running_app([web.post("/threads/{thread}/chat", chat)], "conv-http") as url:
        config = HttpAgent(
            type="http",
            endpoint=f"{url}/threads/{{session}}/chat",
            headers={"x-session": "s={session}"},
            request_template={"thread": "{session}", "messages": "{messages}"},
            response_path="$.reply",
        )
        exchange = asyncio.run(_converse(HttpAdapter(config)))
    assert _answers(exchange) == ["answer 1", "answer 3", "answer 5"]
    assert [(thread, header, body["thread"]) for thread, header, body in seen] == [("fp-s1", "s=fp-s1", "fp-s1")] * 3
    assert seen[2][2]["messages"] == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "answer 1"},
        {"role": "user", "content": "second\nline"},
        {"role": "assistant", "content": "answer 3"},
        {"role": "user", "content": "third"},
    ]
    assert exchange.reply.text == "answer 5"


def test_http_messages_of_a_one_turn_prompt_are_that_prompt() -> None:
    seen: list[Any] = []

    async def chat(request: web.Request) -> web.Response:
        seen.append(await request.json())
        return web.json_response({"reply": "ok"})

    with running_app([web.post("/chat", chat)], "conv-http-one") as url:
        config = HttpAgent(type="http", endpoint=f"{url}/chat", request_template={"messages": "{messages}"})
        exchange = asyncio.run(_converse(HttpAdapter(config), turns=None))
    assert exchange.turns is None and seen == [{"messages": [{"role": "user", "content": "p"}]}]


def test_http_reset_endpoint_gets_the_episodes_session() -> None:
    """At concurrency above 1 an episode must reset its own session, not the conversations beside it (a new
    user's finding): {session} in reset_endpoint is the session its turns then use; validate warns without it."""
    resets: list[str] = []

    async def reset(request: web.Request) -> web.Response:
        resets.append(request.match_info["thread"])
        return web.json_response({})

    with running_app([web.post("/reset/{thread}", reset)], "conv-http-reset") as url:
        config = HttpAgent(type="http", endpoint=f"{url}/chat", reset_endpoint=f"{url}/reset/{{session}}")

        async def reset_once() -> None:
            adapter = HttpAdapter(config)
            await adapter.start()
            try:
                await adapter.reset(Invocation(session="fp-s9"))
            finally:
                await adapter.close()

        asyncio.run(reset_once())
    assert resets == ["fp-s9"]


def test_a_shared_reset_with_conversations_at_once_is_warned_about() -> None:
    from flakeproxy.config import parse_config
    from flakeproxy.config.warnings import config_warnings

    text = BASE_CONVERSATION.format(reset="http://127.0.0.1:1/reset")
    [warning] = [w for w in config_warnings(parse_config(text, "f.yaml")) if "reset_endpoint" in w]
    assert "put {session} in it" in warning and "run.concurrency 4" in warning
    fixed = BASE_CONVERSATION.format(reset="http://127.0.0.1:1/reset/{session}")
    assert not [w for w in config_warnings(parse_config(fixed, "f.yaml")) if "reset_endpoint" in w]


BASE_CONVERSATION = """\
version: "2.0"
agent: {{type: http, endpoint: "http://127.0.0.1:1/t/{{session}}", reset_endpoint: "{reset}"}}
proxy:
  listeners: [{{name: tools, listen: "127.0.0.1:1", upstream: "http://127.0.0.1:2"}}]
targets: {{api: {{listener: tools}}}}
golden_prompts: [[first, second]]
contract: {{name: c, invariants: [{{id: a, type: completes}}]}}
chaos_matrix: [{{name: calm}}]
run: {{concurrency: 4, attribution: header}}
"""


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "agent.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


ONE_PROCESS = """
    import os, sys
    n = 0
    for line in sys.stdin:
        n += 1
        print(f"{os.getpid()} {os.environ['FLAKEPROXY_SESSION']} turn {n}: {line.strip()}", flush=True)
"""


def test_one_process_per_episode_reads_a_turn_per_line(tmp_path: Path) -> None:
    config = CommandAgent(type="command", command=_script(tmp_path, ONE_PROCESS), conversation="one_process")
    adapter = CommandAdapter(config)
    exchange = asyncio.run(_converse(adapter))
    answers = [a.split(" ", 2) for a in _answers(exchange) if a]
    assert len({pid for pid, _, _ in answers}) == 1  # one process for the whole conversation
    assert [(s, rest) for _, s, rest in answers] == [
        ("fp-s1", "turn 1: first"),
        ("fp-s1", "turn 2: second line"),  # a newline inside a turn goes as a space: one turn, one line
        ("fp-s1", "turn 3: third"),
    ]
    assert adapter.sessions == {}  # closed after the last turn


def test_one_process_timeout_is_per_turn_and_an_early_exit_is_that_turns_error(tmp_path: Path) -> None:
    hangs = _script(tmp_path, "import sys, time\nprint('one', flush=True)\nsys.stdin.readline()\ntime.sleep(30)\n")
    config = CommandAgent(type="command", command=hangs, conversation="one_process", timeout_ms=1500)
    answers = _answers(asyncio.run(_converse(CommandAdapter(config))))
    assert answers[0] == "one"
    assert answers[1] == "agent command gave no answer line to turn 2 within 1500 ms (process group killed)"
    # no new process for turn 3: it would not know the conversation (and turn 2 got no reply: not sent at all)
    assert answers[2] == f"not sent: turn 2 got no reply ({answers[1]}), so the conversation stopped there"
    (tmp_path / "dies").mkdir()
    dies = _script(tmp_path / "dies", "import sys\nprint('one', flush=True)\nsys.exit('ValueError: no state')\n")
    config = CommandAgent(type="command", command=dies, conversation="one_process")
    answers = _answers(asyncio.run(_converse(CommandAdapter(config))))
    assert answers == [
        "one",
        "agent command exited 1 before answering turn 2: ValueError: no state",
        "not sent: turn 2 got no reply (agent command exited 1 before answering turn 2: ValueError: no state), so "
        "the conversation stopped there",
    ]


def _gone(pid: int) -> bool:
    """The process has ended (gone, or a zombie no one has reaped yet)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return "\nState:\tZ" in status


def test_a_one_turn_prompt_ends_its_one_process_agent_with_the_episode(tmp_path: Path) -> None:
    """A trial: each one-turn prompt's process lived until the run ended (6 at once at concurrency 1)."""
    config = CommandAgent(type="command", command=_script(tmp_path, ONE_PROCESS), conversation="one_process")
    adapter = CommandAdapter(config)

    async def one_turn() -> tuple[str | None, dict[str, Any]]:
        exchange = await converse(adapter, [], _episode(None), Invocation(cell="e1", session="fp-s1"))
        return exchange.reply.text, dict(adapter.sessions)

    text, left = asyncio.run(one_turn())
    assert text is not None and text.endswith("fp-s1 turn 1: p")
    assert left == {}  # ended with its episode, not at the run's end
    assert _gone(int(text.split()[0]))


GRANDCHILD = """
    import subprocess, sys, pathlib
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    pathlib.Path(sys.argv[0]).with_name("pids").write_text(f"{__import__('os').getpid()} {child.pid}")
    sys.stdin.readline()
    __import__("time").sleep(60)  # never answers
"""


def test_a_cancelled_turn_kills_its_agents_process_group_at_once(tmp_path: Path) -> None:
    """A trial's Ctrl-C mid-turn left the agent and its child running with parent 1."""
    config = CommandAgent(type="command", command=_script(tmp_path, GRANDCHILD), conversation="one_process")
    adapter = CommandAdapter(config)
    pids = tmp_path / "pids"

    async def cancelled() -> float:
        turn = asyncio.create_task(converse(adapter, [], _episode(TURNS), Invocation(cell="e1", session="fp-s2")))
        for _ in range(200):
            if pids.exists() and pids.read_text():
                break
            await asyncio.sleep(0.05)
        started = asyncio.get_running_loop().time()
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        return asyncio.get_running_loop().time() - started

    took = asyncio.run(cancelled())
    agent, child = map(int, pids.read_text().split())
    assert took < 1.5, f"the cancelled turn took {took:.1f} s to end"  # no 2 s of grace
    for _ in range(20):  # SIGKILL is delivered at once; the kernel may take a moment to show it
        if _gone(agent) and _gone(child):
            break
        asyncio.run(asyncio.sleep(0.05))
    assert _gone(agent) and _gone(child)
    assert adapter.sessions == {}


def test_one_process_refuses_a_prompt_argument() -> None:
    with pytest.raises(ValueError, match="one_process writes each turn on the agent's stdin"):
        CommandAgent(type="command", command=["agent", "{prompt}"], conversation="one_process")


PER_TURN = """
    import os, sys, pathlib
    state = pathlib.Path(sys.argv[1]) / os.environ["FLAKEPROXY_SESSION"]
    said = state.read_text() if state.exists() else ""
    said += sys.stdin.read().strip() + ";"
    state.write_text(said)
    print(f"turn {os.environ['FLAKEPROXY_TURN']} knows {said}")
"""


def test_one_process_per_turn_finds_its_state_by_session(tmp_path: Path) -> None:
    config = CommandAgent(type="command", command=[*_script(tmp_path, PER_TURN), str(tmp_path)])
    answers = _answers(asyncio.run(_converse(CommandAdapter(config), session=new_session())))
    assert answers == [
        "turn 1 knows first;",
        "turn 2 knows first;second\nline;",
        "turn 3 knows first;second\nline;third;",
    ]


async def remembers(prompt: str, history: list[dict[str, str]], session: str) -> str:
    return f"{session}: {len(history)} before {prompt}"


def just_the_prompt(prompt: str) -> str:
    return prompt.upper()


def test_a_python_callable_gets_the_history_and_session_by_name() -> None:
    config = PythonAgent(type="python", callable=f"{__name__}:remembers")
    answers = _answers(asyncio.run(_converse(PythonAdapter(config))))
    assert answers == ["fp-s1: 0 before first", "fp-s1: 2 before second\nline", "fp-s1: 4 before third"]
    one_argument = PythonAgent(type="python", callable=f"{__name__}:just_the_prompt")
    assert _answers(asyncio.run(_converse(PythonAdapter(one_argument)))) == ["FIRST", "SECOND\nLINE", "THIRD"]


def asks_for_messages(prompt: str, messages: list[Any]) -> str:
    return prompt


def test_a_python_callable_asking_for_what_flakeproxy_cannot_give_is_a_config_error() -> None:
    """Not a TypeError on every turn and a contract FAIL (a new user's finding): exit 2, naming the parameter."""
    from flakeproxy.errors import ConfigError

    config = PythonAgent(type="python", callable=f"{__name__}:asks_for_messages")
    with pytest.raises(ConfigError, match=r"parameter 'messages' flakeproxy cannot fill; .* history, session, turn"):
        asyncio.run(PythonAdapter(config).start())


PYTHON_AGENT = """
    def get_quote(symbol):
        return {"symbol": symbol, "price": 189.5}

    REGISTRY = {"get_quote": get_quote}

    def chat(prompt, history):
        try:
            quote = REGISTRY["get_quote"]("AAPL")
        except Exception as e:
            return f"turn {len(history) // 2 + 1}: the quote tool failed ({e})"
        return f"turn {len(history) // 2 + 1}: AAPL at {quote['price']} (source: exchange)"
"""


def test_a_python_agents_tool_fault_on_turn_2_hits_turn_2_only(tmp_path: Path) -> None:
    (tmp_path / "turn_agent.py").write_text(textwrap.dedent(PYTHON_AGENT))
    config = {
        "version": "2.0",
        "agent": {"type": "python", "callable": "turn_agent:chat", "tool_registry": "turn_agent:REGISTRY"},
        "golden_prompts": [["first", "second", "third"]],
        "contract": {"name": "c", "invariants": [{"id": "cites", "type": "regex", "pattern": "source", "turn": 2}]},
        "chaos_matrix": [{"name": "down-on-2", "tool_faults": [{"tool": "get_quote", "mode": "error", "turns": [2]}]}],
        "run": {"output": str(tmp_path / "out")},
    }
    path = tmp_path / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(config))
    result = asyncio.run(run_contract_async(load_config(path), str(path), tmp_path / "out"))
    [episode] = [e for e in result.episodes if e.purpose == "matrix"]
    assert episode.transcript is not None
    assert [t.answer for t in episode.transcript] == [
        "turn 1: AAPL at 189.5 (source: exchange)",
        "turn 2: the quote tool failed (tool get_quote failed: HTTP 503: "
        '{"error": {"code": 503, "message": "Service unavailable"}})',
        "turn 3: AAPL at 189.5 (source: exchange)",
    ]
    faulted = [(entry["turn"], bool(entry["fault"])) for entry in episode.journal]
    assert faulted == [(1, False), (2, True), (3, False)]
    assert result.cell("cites", "down-on-2").outcome == "fail"


@pytest.mark.parametrize(
    ("agent", "says"),
    [
        ('endpoint: "http://127.0.0.1:1/t/{sesion}"', "agent.endpoint: {sesion} is sent as it is"),
        ('endpoint: "http://127.0.0.1:1/t/{messages}"', "agent.endpoint: {messages} is sent as it is"),
        ('endpoint: "http://127.0.0.1:1/t", headers: {x-s: "{prompt}"}', "agent.headers.x-s: {prompt} is sent"),
        (
            'endpoint: "http://127.0.0.1:1/t", request_template: {m: ["{messages}"]}',
            "agent.request_template.m[0]: {messages} is sent as it is",
        ),
    ],
)
def test_a_placeholder_an_http_field_does_not_fill_is_warned_about(agent: str, says: str) -> None:
    """Sent literally before, with nothing said (a new user's finding); the fields as the docs show warn nothing."""
    from flakeproxy.config import parse_config
    from flakeproxy.config.warnings import config_warnings

    def warnings(agent: str) -> list[str]:
        text = BASE_CONVERSATION.format(reset="http://127.0.0.1:1/reset/{session}")
        start = text.index("agent: {{") if "agent: {{" in text else text.index("agent: {")
        end = text.index("\n", start)
        return config_warnings(parse_config(text[:start] + f"agent: {{type: http, {agent}}}" + text[end:], "f.yaml"))

    assert any(w.startswith(says) for w in warnings(agent)), warnings(agent)
    good = 'endpoint: "http://127.0.0.1:1/t/{session}", request_template: {m: "{messages}", s: "{session}: {prompt}"}'
    assert not [w for w in warnings(good) if "is sent as it is" in w]
