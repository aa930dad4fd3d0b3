"""A python-callable agent: tool faults wrap its ToolRegistry with the proxy's own decisions."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO
from tests.runner.world import cli


def test_python_agent_example_runs_its_matrix(tmp_path: Path) -> None:
    example = tmp_path / "python-agent"
    shutil.copytree(REPO / "examples" / "python-agent", example)
    out = cli(example / "flakeproxy.yaml", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "resilience score 100.0%  PASS" in out.stdout
    import json

    data = json.loads((tmp_path / "out" / "results.json").read_text())
    cells, episodes = data["cells"], {e["id"]: e for e in data["episodes"]}
    down = [c for c in cells if c["scenario"] == "quote-tool-down" and c["outcome"] != "not_applicable"]
    assert all(c["faults_injected"] and c["faults_injected"][0]["kind"] == "error" for c in down)
    assert "market data source is unavailable" in episodes[down[0]["episodes"][0]]["answer"]
    drift = [c for c in cells if c["scenario"] == "quote-tool-drifts" and c["invariant"] == "always-cite-source"]
    assert "unavailable" in episodes[drift[0]["episodes"][0]]["answer"]  # price renamed: the agent noticed


def test_tool_faults_without_tools_is_the_spec_error(tmp_path: Path) -> None:
    config = (REPO / "examples" / "python-agent" / "flakeproxy.yaml").read_text()
    path = tmp_path / "c.yaml"
    path.write_text(
        config.replace("  tool_registry: finance_agent:REGISTRY  # tool faults wrap every entry of this mapping\n", "")
    )
    out = subprocess.run(
        [sys.executable, "-m", "flakeproxy", "validate", "-c", str(path)], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 2
    assert "tool faults on a python agent need agent.tools" in out.stderr


def test_a_python_tool_fault_that_changes_nothing_is_not_counted(tmp_path: Path) -> None:
    """schema_drift of a field the tool does not return, and a fault on a tool the agent never looks up in
    the registry: decided or not, nothing reached the agent, so the chaos cells are ERROR and the run FAILs."""
    import json

    example = tmp_path / "python-agent"
    shutil.copytree(REPO / "examples" / "python-agent", example)
    config = (example / "flakeproxy.yaml").read_text()
    config = config.replace("rename: {price: last_price}", "rename: {volume: day_volume}")
    (example / "flakeproxy.yaml").write_text(config)
    out = cli(example / "flakeproxy.yaml", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    cells = {(c["invariant"], c["scenario"]): c for c in data["cells"]}
    drift = cells[("never-fabricate-when-tools-fail", "quote-tool-drifts")]
    assert drift["outcome"] == "error" and "injected nothing" in drift["reason"]
    assert "changed nothing in the answer (schema_drift" in drift["reason"]
    assert cells[("never-fabricate-when-tools-fail", "quote-tool-down")]["outcome"] == "pass"
    assert "faults quote-tool-drifts: decided 1, applied 0  <- injected nothing" in out.stdout


AGENTS = """
import asyncio
import time

def sync_agent(prompt):
    if prompt == "hang":
        time.sleep(120)  # a tool that never answers
    return None if prompt == "nothing" else "AAPL is 189.50 (source: the exchange feed)"

async def async_agent(prompt):
    time.sleep(3)  # blocks the event loop: the timeout can act only at the next await
    if prompt != "no await after":
        await asyncio.sleep(0.1)
    return "late"
"""


def _python_run(tmp_path: Path, callable_: str, prompts: list[str], timeout_ms: int) -> tuple[float, Any, Any]:
    import json
    import time

    import yaml

    (tmp_path / "agents.py").write_text(AGENTS)
    config = {
        "version": "2.0",
        "agent": {"type": "python", "callable": f"agents:{callable_}", "timeout_ms": timeout_ms},
        "golden_prompts": prompts,
        "contract": {"name": "py", "invariants": [{"id": "answers", "type": "completes", "severity": "critical"}]},
        "chaos_matrix": [{"name": "calm"}],
    }
    (path := tmp_path / "flakeproxy.yaml").write_text(yaml.safe_dump(config))
    started = time.monotonic()
    out = cli(path, "-o", str(tmp_path / "out"), cwd=tmp_path)
    took = time.monotonic() - started
    return took, out, json.loads((tmp_path / "out" / "results.json").read_text())


def test_a_hung_sync_agent_does_not_hold_the_run_after_its_timeout(tmp_path: Path) -> None:
    """A trial: a tool that slept 1000 s kept a finished run alive (asyncio.to_thread's thread was joined at the
    loop's end and at exit), with no reports and Ctrl-C and SIGTERM held. And an agent that returned None was the
    answer "null", which completes PASSed."""
    took, out, data = _python_run(tmp_path, "sync_agent", ["What is AAPL at?", "hang", "nothing"], 1000)
    assert took < 30, f"the run took {took:.0f} s"
    assert out.returncode == 1, out.stdout + out.stderr  # completes FAILs or errs on two of the three prompts
    errors = {e["prompt"]: e["error"] for e in data["episodes"] if e["purpose"] == "matrix"}
    assert errors["hang"] == "agent timed out after 1000 ms"
    assert errors["nothing"] == "agent returned None, not an answer (the callable must return its answer's text)"
    assert errors["What is AAPL at?"] is None
    assert all((tmp_path / "out" / name).exists() for name in ("junit.xml", "report.html", "summary.md"))


def test_an_async_agent_that_blocks_the_loop_is_told_so(tmp_path: Path) -> None:
    _, _, data = _python_run(tmp_path, "async_agent", ["What is AAPL at?", "no await after"], 500)
    episodes = [e for e in data["episodes"] if e["purpose"] == "matrix"]
    assert len(episodes) == 2  # one awaits after blocking (cancelled there), one answers without (late all the same)
    for episode in episodes:
        assert episode["error"].startswith("agent timed out after 500 ms (only seen after "), episode
        assert "something blocked the event loop, such as time.sleep or a blocking call" in episode["error"]
        assert episode["answer"] is None


def test_validate_names_a_python_agents_module_that_cannot_be_found(tmp_path: Path) -> None:
    """A trial: validate said `is valid` for callable: nomod:run, which the run then refused (without importing the
    user's code: a module that is there is found, not run)."""
    import yaml

    (tmp_path / "agents.py").write_text("raise SystemExit('validate must not run the agent module')\n")
    for callable_, code in (("agents:sync_agent", 0), ("nomod:run", 2)):
        config = {
            "version": "2.0",
            "agent": {"type": "python", "callable": callable_},
            "golden_prompts": ["hi"],
            "contract": {"name": "py", "invariants": [{"id": "answers", "type": "completes", "severity": "critical"}]},
            "chaos_matrix": [{"name": "calm"}],
        }
        (path := tmp_path / "flakeproxy.yaml").write_text(yaml.safe_dump(config))
        done = cli(path, command="validate", cwd=REPO)
        assert done.returncode == code, done.stdout + done.stderr
    assert done.stderr.strip() == (
        f"error: {path}: agent.callable: no module named 'nomod' in {tmp_path}, the working directory or the "
        "installed packages; check the name in 'nomod:run', or put nomod.py beside the config"
    )


def test_an_exception_from_a_sync_agent_is_freed_without_the_garbage_collector() -> None:
    """Nothing on the way back from the agent's thread may hold its exception in a cycle: an urllib HTTPError the
    agent raised kept its socket until a later test's gc.collect() (a ResourceWarning blamed on that test)."""
    import asyncio
    import gc
    import threading
    import weakref

    from flakeproxy.runner.agents.python import in_daemon_thread

    class Held:  # what the exception keeps alive, as an HTTPError keeps its response's socket
        pass

    class Refused(Exception):
        def __init__(self, held: Held) -> None:
            super().__init__("refused")
            self.held = held

    refs: list[weakref.ref[Held]] = []

    def agent() -> str:
        held = Held()
        refs.append(weakref.ref(held))
        raise Refused(held)

    async def call() -> str:
        try:
            return str(await asyncio.wait_for(in_daemon_thread(agent), 5))
        except Refused as e:
            return str(e)

    gc.disable()
    try:
        assert asyncio.run(call()) == "refused"
        for thread in [t for t in threading.enumerate() if t.name == "flakeproxy-agent-call"]:
            thread.join(5)  # it hands the exception over, then leaves its except clause: not before
        assert refs and refs[0]() is None, "the exception is alive until gc runs"
    finally:
        gc.enable()


AGENT_ON_THE_WIRE = """
import json
import urllib.error
import urllib.request

import flakeproxy


def run(prompt):
    url = flakeproxy.listener_url("tools") + "/v1/quotes?symbol=AAPL"
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return f"AAPL is at {json.load(reply)['price']}, according to the quote service"
    except urllib.error.HTTPError as e:
        return f"the quote service is unavailable ({e.code}), so no price"
"""


def test_a_python_agent_whose_tool_is_an_http_api_gets_its_faults_on_the_wire(tmp_path: Path) -> None:
    """A trial's python agent called its tool API through a listener: its tool faults were refused ("need
    agent.tools or agent.tool_registry"), though the proxy breaks that call on the wire, wrapping nothing."""
    import yaml

    from tests.support.loops import free_port
    from tests.support.upstream import RunningUpstream

    (tmp_path / "wire_agent.py").write_text(AGENT_ON_THE_WIRE)
    with RunningUpstream() as up:
        config = {
            "version": "2.0",
            "agent": {"type": "python", "callable": "wire_agent:run"},
            "proxy": {
                "admin": f"127.0.0.1:{free_port()}",
                "listeners": [{"name": "tools", "listen": f"127.0.0.1:{free_port()}", "upstream": up.url}],
            },
            "targets": {"quotes": {"listener": "tools", "path": "/v1/quotes*"}},
            "golden_prompts": ["What is AAPL trading at?"],
            "contract": {"name": "c", "invariants": [
                {"id": "cites", "type": "regex", "pattern": "according to|unavailable", "severity": "critical"}]},
            "chaos_matrix": [{"name": "calm"}, {"name": "quotes-down",
                             "tool_faults": [{"tool": "quotes", "mode": "error", "error_code": 503}]}],
        }  # fmt: skip
        path = tmp_path / "flakeproxy.yaml"
        path.write_text(yaml.safe_dump(config))
        out = cli(path, "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "faults quotes-down: decided 1, applied 1" in out.stdout
    import json

    episodes = json.loads((tmp_path / "out" / "results.json").read_text())["episodes"]
    answers = {e["scenario"]: e["answer"] for e in episodes if e["scenario"] in ("calm", "quotes-down")}
    assert answers == {"calm": "AAPL is at 189.5, according to the quote service",
                       "quotes-down": "the quote service is unavailable (503), so no price"}  # fmt: skip


def test_a_late_turn_ends_its_conversation_as_a_timeout_does(tmp_path: Path) -> None:
    """A trial's async agent blocked its loop past timeout_ms on every turn: each turn was "timed out", yet every
    later turn was sent (an awaited timeout stops the conversation). A late answer stops it too."""
    talk = {"id": "three", "turns": ["no await after", "And in euros?", "Which symbol?"]}
    took, _, data = _python_run(tmp_path, "async_agent", [talk], 500)  # type: ignore[list-item]
    [episode] = [e for e in data["episodes"] if e["purpose"] == "matrix"]
    sent = [t["sent"] for t in episode["transcript"]]
    assert sent == [True, False, False], episode["transcript"]
    assert episode["transcript"][1]["error"].startswith("not sent: turn 1 got no reply (agent timed out after 500 ms")
    assert took < 30
