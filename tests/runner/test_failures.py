"""When the world outside the agent's calls breaks: exit 3, one line, and the results so far kept."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.runner.world import cli, sigterm_mid_run, world
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
        out = cli(w.config)
    assert out.returncode == 3, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: agent {dead}/chat unreachable") and "Traceback" not in out.stderr
    partial = json.loads((tmp_path / "out" / "results.json").read_text())
    assert partial["complete"] is False and "unreachable" in partial["interrupted_by"]


def test_proxy_dying_mid_run_exits_3_and_keeps_the_results_so_far(tmp_path: Path) -> None:
    results = tmp_path / "out" / "results.json"
    killed: list[int] = []
    with world(tmp_path, delay_s=0.5) as w:

        def kill_proxy_after_first_scenario() -> None:
            deadline = time.monotonic() + 60
            while not results.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            killed.append(subprocess.run(["pkill", "-KILL", "-f", f" proxy -c {w.config}"]).returncode)

        killer = threading.Thread(target=kill_proxy_after_first_scenario)
        killer.start()
        out = cli(w.config)
        killer.join()
    assert killed == [0], f"pkill found no proxy process: {killed}"
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


def test_sigterm_writes_the_results_and_stops_the_proxy(tmp_path: Path) -> None:
    """What CI cancellation and `docker stop` send: handled like Ctrl-C."""
    results = tmp_path / "out" / "results.json"
    with world(tmp_path, delay_s=0.4) as w:
        code, err = sigterm_mid_run(w.config, results)
        proxy = subprocess.run(["pgrep", "-f", f" proxy -c {w.config}"], capture_output=True)
    assert code == 143, err
    assert err.strip().splitlines()[-1].startswith("error: interrupted by SIGTERM; the results so far are in")
    partial = json.loads(results.read_text())
    assert partial["complete"] is False and partial["interrupted_by"] and partial["episodes"]
    assert proxy.returncode == 1, "the proxy child is still running"
