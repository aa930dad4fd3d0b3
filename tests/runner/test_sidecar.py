"""A runner driving a sidecar someone else started (`proxy.admin_url`): the real `flakeproxy proxy` as a child of
the test, with its own config, and `flakeproxy contract run` as a user runs it.

- However the run stops (Ctrl-C, SIGTERM), the sidecar is left with no open episode of it: the next request
  through it, anyone's, passes unfaulted (it used to land in the stopped run's episode and get its faults).
- A runner killed outright (SIGKILL) cannot end its episode: the sidecar ends it itself once its lease ran out.
- What is judged is what this config says: the runner sends each scenario whole, so a sidecar whose matrix is
  missing, or defines the same names otherwise, runs this config's faults; a sidecar whose targets differ is
  refused in one line naming the first difference.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from flakeproxy.runner.sidecar import targets_difference
from tests.hardening.runs import agent_app, agent_routes
from tests.support.agents import http_agent
from tests.support.loops import free_port
from tests.support.upstream import RunningUpstream

FLAKEPROXY = [sys.executable, "-m", "flakeproxy"]
TOKEN = "s1decar-t0ken"
TARGETS = {"quotes": {"listener": "tools", "path": "/v1/quotes*", "method": "GET"}}
DOWN = [{"name": "quotes-down", "tool_faults": [{"tool": "quotes", "mode": "error", "error_code": 503}]}]
ANSWER = json.dumps({"reply": "AAPL is at 189.50, according to the exchange feed (source)."}).encode()


@dataclass
class Sidecar:
    admin: str  # HOST:PORT of its control API
    listener: str  # HOST:PORT of its `tools` listener
    said: list[str]  # its stderr, once it stopped

    def health(self) -> dict[str, Any]:
        request = urllib.request.Request(f"http://{self.admin}/healthz", headers={"authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            data: dict[str, Any] = json.loads(response.read())
            return data

    def quote(self) -> int:
        """The status a client of the sidecar gets for a quote, through the listener (no episode named)."""
        try:
            with urllib.request.urlopen(f"http://{self.listener}/v1/quotes?symbol=AAPL", timeout=10) as response:
                return int(response.status)
        except urllib.error.HTTPError as e:
            return e.code


@contextmanager
def sidecar(tmp: Path, targets: dict[str, Any] | None = None, matrix: list[Any] | None = None) -> Iterator[Sidecar]:
    """`flakeproxy proxy -c sidecar.yaml` (its own config: these targets, this matrix or none) until its ready line,
    in front of a real upstream; stopped at the end."""
    with RunningUpstream() as up:
        admin, listener = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
        data: dict[str, Any] = {
            "version": "2.0",
            "proxy": {
                "admin": admin,
                "token": TOKEN,
                "listeners": [{"name": "tools", "listen": listener, "upstream": up.url}],
            },
            "targets": targets or TARGETS,
        }
        if matrix is not None:
            data["chaos_matrix"] = matrix
        config = tmp / "sidecar.yaml"
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        args = [*FLAKEPROXY, "proxy", "-c", str(config)]
        with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
            said: list[str] = []
            try:
                assert child.stdout is not None and child.stderr is not None
                line = child.stdout.readline()
                assert line.startswith("flakeproxy proxy ready"), (line, child.stderr.read() if child.poll() else "")
                yield Sidecar(admin, listener, said)
            finally:
                child.terminate()
                _, err = child.communicate(timeout=15)
                said += err.splitlines()


def runner_config(
    tmp: Path, side: Sidecar, agent: str, matrix: list[Any], timeout_ms: int = 30000, prompts: int = 1
) -> Path:
    """The runner's config: the sidecar's control API (admin_url), its listener, this config's targets and matrix."""
    data = {
        "version": "2.0",
        "agent": http_agent(agent, reset_endpoint=f"{agent}/reset", timeout_ms=timeout_ms),
        "proxy": {
            "admin_url": f"http://{side.admin}",
            "token": TOKEN,
            "listeners": [{"name": "tools", "listen": side.listener, "upstream": "http://127.0.0.1:9"}],
        },
        "targets": TARGETS,
        "golden_prompts": ["What is AAPL trading at?", "And MSFT?"][:prompts],
        "contract": {
            "name": "sidecar",
            "invariants": [{"id": "cites", "type": "regex", "pattern": "(?i)source", "severity": "high"}],
        },
        "chaos_matrix": matrix,
        "run": {"seed": 3, "output": str(tmp / "out")},
    }
    path = tmp / "runner.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def contract_run(config: Path) -> subprocess.CompletedProcess[str]:
    command = [*FLAKEPROXY, "contract", "run", "-c", str(config)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=config.parent)


def wait_open(side: Sidecar, runner: subprocess.Popen[Any], seconds: float = 60) -> list[str]:
    """The sidecar's open episodes, once the runner opened one (polled against a deadline)."""
    deadline = time.monotonic() + seconds
    while not (opened := side.health()["open_episodes"]):
        assert runner.poll() is None, f"the runner ended (exit {runner.returncode}) before it opened an episode"
        assert time.monotonic() < deadline, "the runner opened no episode on the sidecar"
        time.sleep(0.05)
    return list(opened)


@pytest.mark.timeout(150)
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_run_stopped_mid_episode_leaves_the_sidecar_faulting_no_one(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    with (
        sidecar(tmp_path, matrix=DOWN) as side,
        agent_app(agent_routes(f"http://{side.listener}", ANSWER, delay_s=30)) as agent,
    ):
        assert side.quote() == 200, "before the run: the sidecar passes a quote"
        config = runner_config(tmp_path, side, agent, DOWN)
        command = [*FLAKEPROXY, "contract", "run", "-c", str(config)]
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as runner:
            try:
                opened = wait_open(side, runner)  # the agent now waits 30 s inside its episode of quotes-down
                assert side.quote() == 503, "while the episode is open, a request without a name lands in it"
                runner.send_signal(sig)
                _, err = runner.communicate(timeout=30)
            finally:
                if runner.poll() is None:
                    runner.kill()
        assert runner.returncode == code, err[-2000:]
        assert f"error: interrupted by {sig.name}" in err
        assert side.health()["open_episodes"] == [], f"the stopped run left {opened} open on the sidecar"
        assert side.quote() == 200, "after the run: the sidecar faults no one's requests"


CRASHY = """
import asyncio

calls = 0


async def reset():
    global calls
    calls += 1
    if calls == 2:  # the second episode's reset, while the first one runs
        await asyncio.sleep({pause_s})
        raise RuntimeError("boom in reset")
"""


@pytest.mark.timeout(150)
@pytest.mark.parametrize("pause_s", [1.5, 0], ids=["first-episode-open", "first-episode-opening"])
def test_a_run_that_crashes_mid_episode_leaves_the_sidecar_faulting_no_one(tmp_path: Path, pause_s: float) -> None:
    """Two episodes at once (the agent forwards the episode header); the second one's reset raises: the run stops
    with exit 3 while the first is open, or while the sidecar is still opening it (its id comes after the stop)."""
    (tmp_path / "crashy.py").write_text(CRASHY.format(pause_s=pause_s))
    with (
        sidecar(tmp_path, matrix=DOWN) as side,
        agent_app(agent_routes(f"http://{side.listener}", ANSWER, delay_s=30)) as agent,
    ):
        config = runner_config(tmp_path, side, agent, DOWN, prompts=2)
        data = yaml.safe_load(config.read_text())
        data["agent"] = {**data["agent"], "reset_function": "crashy:reset"}
        del data["agent"]["reset_endpoint"]
        data["run"] |= {"concurrency": 2, "attribution": "header"}
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        out = contract_run(config)
        assert out.returncode == 3, out.stderr[-2000:]
        assert "boom in reset" in out.stderr
        assert side.health()["open_episodes"] == [], "the crashed run left its episode open on the sidecar"
        assert side.quote() == 200, "after the run: the sidecar faults no one's requests"


@pytest.mark.timeout(150)
def test_a_killed_runners_episode_ends_on_the_sidecar_when_its_lease_runs_out(tmp_path: Path) -> None:
    """SIGKILL: the runner cannot end its episode; it opened it with a lease (the agent's timeout, 3 s, plus the
    margin, 30 s), and the sidecar ends it when no call on it came for that long, and says so."""
    with (
        sidecar(tmp_path, matrix=DOWN) as side,
        agent_app(agent_routes(f"http://{side.listener}", ANSWER, delay_s=60)) as agent,
    ):
        config = runner_config(tmp_path, side, agent, DOWN, timeout_ms=3000)
        command = [*FLAKEPROXY, "contract", "run", "-c", str(config)]
        with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as runner:
            try:
                opened = wait_open(side, runner)
            finally:
                runner.kill()
        killed = time.monotonic()
        assert side.quote() == 503, "the killed run's episode still catches requests"
        while side.health()["open_episodes"]:
            assert time.monotonic() - killed < 33 + 20, f"the sidecar kept {opened} open past the lease"
            time.sleep(0.2)
        assert side.quote() == 200, "the expired episode faults no one's requests"
    assert any(f"ended episode {opened[0]}" in line and "33000 ms" in line for line in side.said), side.said


def test_a_sidecar_without_the_matrix_runs_the_runners_scenarios(tmp_path: Path) -> None:
    with sidecar(tmp_path) as side, agent_app(agent_routes(f"http://{side.listener}", ANSWER)) as agent:
        out = contract_run(runner_config(tmp_path, side, agent, [{"name": "no-chaos"}, *DOWN]))
    assert out.returncode in (0, 1), out.stderr[-2000:]  # judged (the agent cites its source whatever happens)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    down = [e for e in results["episodes"] if e["scenario"] == "quotes-down"]
    assert [f["effect"] for e in down for entry in e["journal"] if (f := entry.get("fault"))] == ["replied 503"]


def test_a_sidecar_whose_scenario_of_the_same_name_differs_runs_the_runners(tmp_path: Path) -> None:
    """Same name, other faults on the sidecar (a 500 on every call): the run injects and reports its own 503."""
    theirs = [{"name": "quotes-down", "tool_faults": [{"tool": "quotes", "mode": "error", "error_code": 500}]}]
    with (
        sidecar(tmp_path, matrix=theirs) as side,
        agent_app(agent_routes(f"http://{side.listener}", ANSWER)) as agent,
    ):
        out = contract_run(runner_config(tmp_path, side, agent, DOWN))
    assert out.returncode in (0, 1), out.stderr[-2000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    statuses = [entry["status"] for e in results["episodes"] for entry in e["journal"]]
    faults = [f for e in results["episodes"] for entry in e["journal"] if (f := entry.get("fault"))]
    assert statuses == [503] and [f["effect"] for f in faults] == ["replied 503"], (statuses, faults)


def test_a_sidecar_with_other_targets_is_refused_in_one_line(tmp_path: Path) -> None:
    theirs = {"quotes": {"listener": "tools", "path": "/v2/quotes*", "method": "GET"}}
    with (
        sidecar(tmp_path, targets=theirs, matrix=DOWN) as side,
        agent_app(agent_routes(f"http://{side.listener}", ANSWER)) as agent,
    ):
        config = runner_config(tmp_path, side, agent, DOWN)
        out = contract_run(config)
        assert side.health()["open_episodes"] == []
    assert out.returncode == 2, out.stderr[-2000:]
    assert out.stderr.strip() == (
        f"error: {config}: the proxy at http://{side.admin} matches requests to other targets than this config: "
        "target 'quotes': path is '/v1/quotes*' here, '/v2/quotes*' in the proxy's config; start the proxy with "
        f"this config's targets, or copy the proxy's targets into {config}"
    )


LLM = {"listener": "tools", "api": "openai"}


@pytest.mark.parametrize(
    ("own", "theirs", "said"),
    [
        (TARGETS, TARGETS, None),
        (TARGETS, {}, "target 'quotes' is in this config, not in the proxy's targets"),
        ({}, TARGETS, "target 'quotes' is in the proxy's config, not in this one's targets"),
        (
            {"llm": LLM},
            {"llm": {**LLM, "api": None}},
            "target 'llm': api is 'openai' here, unset in the proxy's config",
        ),
        (
            {"llm": LLM},
            {"llm": {**LLM, "listener": "llm"}},
            "target 'llm': listener is 'tools' here, 'llm' in the proxy's config",
        ),
        (
            TARGETS,
            {"quotes": TARGETS["quotes"], "llm": LLM},
            "target 'llm' is in the proxy's config, not in this one's targets",
        ),
    ],
    ids=["same", "missing-there", "extra-there", "api", "listener", "an-extra-llm"],
)
def test_the_first_difference_of_targets_in_words(
    own: dict[str, Any], theirs: dict[str, Any], said: str | None
) -> None:
    fields = {"listener": None, "path": None, "method": None, "mcp_tool": None, "api": None, "host": None}
    assert (
        targets_difference(
            {n: {**fields, **t} for n, t in own.items()}, {n: {**fields, **t} for n, t in theirs.items()}
        )
        == said
    )
