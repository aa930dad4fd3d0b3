"""When the world outside the agent's calls breaks: exit 3, one line, and the results so far kept."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.runner.world import cli, sigterm_mid_run, world
from tests.support.children import kill_proxy_children, proxy_children
from tests.support.loops import free_port


def test_unreachable_agent_exits_3_with_one_line(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with world(
        tmp_path,
        agent_config={
            "type": "http",
            "endpoint": f"{dead}/chat",
            "response_path": "$.reply",
            "request_template": {"message": "{prompt}"},
        },
    ) as w:
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / "results.json").write_text('{"a previous run": true}')  # replaced: not this run's
        out = cli(w.config)
    assert out.returncode == 3, out.stderr
    assert "Traceback" not in out.stderr and out.stdout == "", out.stdout  # no matrix: nothing ran
    files = ", ".join(
        str(tmp_path / "out" / name) for name in ("results.json", "junit.xml", "report.html", "summary.md")
    )
    assert out.stderr.strip().splitlines()[-2:] == [
        f"wrote {files} (this run's record: it stopped before any episode ended)",
        f"error: agent {dead}/chat unreachable: Connection refused; start the agent, or fix agent.endpoint if it "
        "listens elsewhere",
    ]
    partial = json.loads((tmp_path / "out" / "results.json").read_text())
    assert partial["complete"] is False and "unreachable" in partial["interrupted_by"]
    assert "unreachable" in (tmp_path / "out" / "summary.md").read_text()  # its reports say why they are empty


def test_an_agent_not_running_whose_reset_comes_first_says_to_start_it(tmp_path: Path) -> None:
    """A trial's agent was not running: the reset before the first episode failed first, with no fix in the line."""
    dead = f"http://127.0.0.1:{free_port()}"
    agent = {"type": "http", "endpoint": f"{dead}/chat", "reset_endpoint": f"{dead}/reset", "response_path": "$.reply"}
    with world(tmp_path, agent_config={**agent, "request_template": {"message": "{prompt}"}}) as w:
        out = cli(w.config)
    assert out.returncode == 3, out.stderr
    assert out.stderr.strip().splitlines()[-1] == (
        f"error: agent reset {dead}/reset unreachable: Connection refused; start the agent, or fix "
        "agent.reset_endpoint if it listens elsewhere"
    )


@pytest.mark.proxy_child  # the child is what dies
def test_proxy_dying_mid_run_exits_3_and_keeps_the_results_so_far(tmp_path: Path) -> None:
    results = tmp_path / "out" / "results.json"
    killed: list[int] = []
    with world(tmp_path, delay_s=0.5) as w:

        def kill_proxy_after_first_scenario() -> None:
            deadline = time.monotonic() + 60
            while not results.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            killed.append(kill_proxy_children(w.config))

        killer = threading.Thread(target=kill_proxy_after_first_scenario)
        killer.start()
        out = cli(w.config)
        killer.join()
    assert killed == [1], f"not one proxy child to kill: {killed}"
    assert out.returncode == 3, out.stdout + out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("error: ")
    partial = json.loads(results.read_text())
    assert partial["complete"] is False and partial["score"] is None
    assert {c["scenario"] for c in partial["cells"]} >= {"no-chaos"}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_agent_runs_through_the_same_matrix(tmp_path: Path) -> None:
    script = str(REPO / "examples" / "node-agent" / "agent.js")
    with world(tmp_path, agent_config={"type": "command", "command": ["node", script], "timeout_ms": 20000}) as w:
        listeners = {lst["name"]: f"http://{lst['listen']}" for lst in w.data["proxy"]["listeners"]}
        w.data["agent"]["env"] = {"TOOLS_URL": listeners["tools"], "LLM_URL": listeners["llm"]}
        import yaml

        w.config.write_text(yaml.safe_dump(w.data))
        out = cli(w.config)
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    cells = {(c["invariant"], c["scenario"]): c for c in data["cells"]}
    down = cells[("never-fabricate-when-tools-fail", "search-tool-down")]
    assert down["outcome"] == "pass" and down["faults_injected"][0]["kind"] == "error"
    episodes = {e["id"]: e for e in data["episodes"]}
    assert "unavailable" in episodes[down["episodes"][0]]["answer"]
    calm = cells[("always-cite-source", "no-chaos")]
    assert episodes[calm["episodes"][0]]["answer"].startswith("AAPL trades at $189.50")


@pytest.mark.proxy_child  # the child must be gone
def test_sigterm_writes_the_results_and_stops_the_proxy(tmp_path: Path) -> None:
    """What CI cancellation and `docker stop` send: handled like Ctrl-C."""
    results = tmp_path / "out" / "results.json"
    with world(tmp_path, delay_s=0.4) as w:
        code, err = sigterm_mid_run(w.config, results)
        left = proxy_children(w.config)
    assert code == 143, err
    assert err.strip().splitlines()[-1].startswith("error: interrupted by SIGTERM; the results so far are in")
    partial = json.loads(results.read_text())
    assert partial["complete"] is False and partial["interrupted_by"] == "SIGTERM" and partial["episodes"]
    assert left == [], "the proxy child is still running"


HANGING_AGENT = """
import os, pathlib, sys, time
pathlib.Path(sys.argv[1], f"{os.getpid()}.pid").write_text("")
time.sleep(600)  # an agent that never answers: only the runner can end it
"""


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for a parent to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.proxy_child  # Ctrl-C with the child
def test_ctrl_c_in_a_slotted_run_kills_the_command_agents_it_started(tmp_path: Path) -> None:
    """The command agents run in sessions of their own (a timeout kills their group), so a Ctrl-C at the
    terminal reaches only the runner: it must kill the ones still running, and say nothing but its one line."""
    pids = tmp_path / "pids"
    pids.mkdir()
    agent = {"type": "command", "command": [sys.executable, "-c", HANGING_AGENT, str(pids)], "timeout_ms": 120000}
    with world(tmp_path, agent_config=agent, run={"attribution": "slots"}) as w:
        w.data["proxy"]["slots"] = 2
        for listener in w.data["proxy"]["listeners"]:
            listener["slot_listen"] = [listener["listen"], f"127.0.0.1:{free_port()}"]
        w.config.write_text(yaml.safe_dump(w.data))
        run = subprocess.Popen(
            [sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(w.config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        started = [int(p.stem) for p in pids.iterdir()]
        assert len(started) == 2, "the two slots' agents did not start"
        os.kill(run.pid, signal.SIGINT)
        _out, err = run.communicate(timeout=30)
    assert run.returncode == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err.strip().splitlines()[-1].startswith("error: interrupted by SIGINT; the results so far are in")
    assert [pid for pid in started if _alive(pid)] == [], "agents outlived the run"
    partial = json.loads((tmp_path / "out" / "results.json").read_text())
    assert partial["complete"] is False and partial["interrupted_by"] == "SIGINT"


@pytest.mark.proxy_child  # Ctrl-C while the run starts its child
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_while_the_run_starts_writes_its_record_in_place_of_the_previous_runs(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    """A trial's Ctrl-C 0.2-0.6 s after launch (the config loading, the proxy child starting) exited 130 and left
    the previous run's complete PASS record in place, for a CI step to read as this run's. Held until the run is
    under way, the signal stops it there, and the stopped run writes its own record."""
    with world(tmp_path) as w:
        out = tmp_path / "out"
        out.mkdir(exist_ok=True)
        stale = {"complete": True, "started_at": "2000-01-01T00:00:00+00:00", "interrupted_by": None}
        (out / "results.json").write_text(json.dumps(stale))
        run = subprocess.Popen(
            [sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(w.config), "-o", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while not proxy_children(w.config) and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        assert proxy_children(w.config), "the run started no proxy child"
        os.kill(run.pid, sig)  # the child has just been forked: the runner is loading its config
        _out, err = run.communicate(timeout=60)
        assert run.returncode == code, err
        assert "Traceback" not in err, err
        assert err.strip().splitlines()[-1].startswith(f"error: interrupted by {sig.name}; the results so far are in")
        record = json.loads((out / "results.json").read_text())
        assert record["started_at"] != stale["started_at"] and record["complete"] is False, record
        assert record["interrupted_by"] == sig.name and record["episodes"] == [], record
        assert "(this run's record: it stopped before any episode ended)" in err, err
        assert kill_proxy_children(w.config) == 0, "the proxy child outlived the run"


#: A sitecustomize: the program's own SIGINT (a Ctrl-C) the moment it first imports click, i.e. while the CLI's
#: imports run, before cli.main.entry() could hold anything.
CTRL_C_AT_CLICK = """import os, signal, sys
class _CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "click":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, _CtrlC())
"""


@pytest.mark.proxy_child
@pytest.mark.parametrize("how", [["-m", "flakeproxy"], ["-c", "from flakeproxy.cli.start import entry; entry()"]])
def test_ctrl_c_during_the_programs_own_imports_is_held_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: list[str]
) -> None:
    """A trial's Ctrl-C in the first ~40 ms (the CLI's imports, before entry() held signals) gave a
    KeyboardInterrupt traceback and left the previous run's results.json. The program's first module
    (cli/start.py, the console script's and `python -m flakeproxy`'s) holds them before importing click."""
    (site := tmp_path / "site").mkdir()
    (site / "sitecustomize.py").write_text(CTRL_C_AT_CLICK)
    monkeypatch.setenv("PYTHONPATH", str(site))
    with world(tmp_path) as w:
        out = tmp_path / "out"
        argv = ["contract", "run", "-c", str(w.config), "-o", str(out)]  # -c: sys.argv[1:] as the console script's
        done = subprocess.run([sys.executable, *how, *argv], capture_output=True, text=True, timeout=60)
        assert done.returncode == 130, done.stderr[-2000:]
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        assert "(this run's record: it stopped before any episode ended)" in done.stderr
        record = json.loads((out / "results.json").read_text())
        assert record["interrupted_by"] == "SIGINT" and record["episodes"] == [], record
        assert kill_proxy_children(w.config) == 0, "the proxy child outlived the run"


@pytest.mark.proxy_child  # the child started before the config was found wrong
def test_a_config_error_stops_the_early_proxy_child_at_once(tmp_path: Path) -> None:
    """The proxy child is forked while the runner holds its signals (a Ctrl-C while it starts): forked with the
    runner's holding handlers, it ignored end_child's SIGTERM and a config error waited 10 s for its SIGKILL."""
    with world(tmp_path) as w:
        w.data["contract"]["invariants"][0]["severity"] = "bogus"  # found by the models, after the early fork
        w.config.write_text(yaml.safe_dump(w.data))
        began = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(w.config)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        took = time.monotonic() - began
        assert done.returncode == 2 and "severity: must be one of" in done.stderr, done.stderr
        assert took < 5, f"a config error took {took:.1f} s: the proxy child outlived its SIGTERM"
        assert kill_proxy_children(w.config) == 0
