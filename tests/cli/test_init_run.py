"""`flakeproxy init` for your own agent, then `flakeproxy contract run`, as its output says: a small HTTP agent
on the official openai SDK (written here) passes the starter contract behind the real proxy, and a careless
one (an LLM error becomes its own HTTP 500) fails it. The config is init's (--llm-upstream: the fake OpenAI on
loopback instead of api.openai.com; --base-port 9700), unchanged but for its ports (made free)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

from tests.support.loops import free_port, running_app
from tests.support.openai_agent import agent_routes
from tests.support.upstream import RunningUpstream, Upstream

SCENARIOS = ["no-chaos", "llm-rate-limited", "llm-down", "llm-truncated", "tool-down"]


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with RunningUpstream() as up:
        yield up


def init_and_localize(folder: Path, agent_url: str, up: Upstream, *flags: str) -> tuple[Path, dict[str, str]]:
    """Run init as a user would; make its ports free and its OpenAI upstream the fake; return the config and the
    agent's settings, read from what init printed."""
    config = folder / "flakeproxy.yaml"
    args = ["init", "-y", "-c", str(config), "--endpoint", f"{agent_url}/chat", "--tool", f"{up.url}/v1",
            "--llm-upstream", up.url, "--base-port", "9700", *flags]  # fmt: skip
    out = subprocess.run([sys.executable, "-m", "flakeproxy", *args], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    ports: dict[str, str] = {}

    def swap(m: re.Match[str]) -> str:
        return f"127.0.0.1:{ports.setdefault(m[1], str(free_port()))}"

    assert "127.0.0.1:87" not in config.read_text() + out.stdout  # --base-port moved every port
    config.write_text(re.sub(r"127\.0\.0\.1:(97\d\d)", swap, config.read_text()))
    printed = re.sub(r"127\.0\.0\.1:(97\d\d)", swap, out.stdout)
    base = re.search(r"^  OPENAI_BASE_URL=(\S+)$", printed, re.M)
    tool = re.search(rf"^  its base URL for {re.escape(up.url)}/v1: (\S+)$", printed, re.M)
    assert base and tool, printed
    return config, {"OPENAI_BASE_URL": base[1], "tool": tool[1]}


def run(config: Path, out: Path) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "flakeproxy", "contract", "run", "-c", str(config), "-o", str(out)]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("careful", [True, False], ids=["careful", "careless"])
def test_your_own_agent_under_the_starter_contract(upstream: Upstream, tmp_path: Path, careful: bool) -> None:
    urls: dict[str, str] = {}
    with running_app(agent_routes(urls, careful), "agent") as agent_url:
        config, settings = init_and_localize(tmp_path, agent_url, upstream)
        urls.update(settings)
        out = run(config, tmp_path / "out")
    header = next(line for line in out.stdout.splitlines() if line.startswith("invariant"))
    assert header.split()[1:] == SCENARIOS
    if careful:
        assert out.returncode == 0, out.stdout + out.stderr[-3000:]
        assert "resilience score 100.0%  PASS\n" in out.stdout
        for scenario in SCENARIOS[1:]:
            assert f"faults {scenario}: decided " in out.stdout and f"faults {scenario}: decided 0" not in out.stdout
    else:
        assert out.returncode == 1, out.stdout + out.stderr[-3000:]
        assert "critical invariant answers failed in scenario llm-down" in out.stdout
    assert out.stderr.splitlines()[-1] == "wrote " + ", ".join(
        str(tmp_path / "out" / f) for f in ("results.json", "junit.xml", "report.html", "summary.md")
    )


@pytest.mark.timeout(120)
def test_an_agent_that_streams_has_its_stream_cut(upstream: Upstream, tmp_path: Path) -> None:
    """init --stream: the LLM target says stream: true and a sixth scenario cuts the stream mid-way; the agent on
    the SDK's streaming takes the fragment as its answer, which the starter's checks cannot tell from a whole
    one, and the run says so."""
    urls: dict[str, str] = {}
    with running_app(agent_routes(urls, careful=True, stream=True), "agent") as agent_url:
        config, settings = init_and_localize(tmp_path, agent_url, upstream, "--stream")
        urls.update(settings)
        out = run(config, tmp_path / "out")
    header = next(line for line in out.stdout.splitlines() if line.startswith("invariant"))
    assert header.split()[1:] == [*SCENARIOS[:4], "llm-stream-cut", SCENARIOS[4]]
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    cut = re.search(r"^faults llm-stream-cut: decided (\d+), applied (\d+)", out.stdout, re.M)
    assert cut and int(cut[2]) >= 1, out.stdout  # the stream was really cut, not only decided
    said = "warning: scenario llm-stream-cut: llm_faults[0] stream_cut (applied 1) cut the LLM answers"
    assert said in out.stderr and "reads whether an answer is whole" in out.stderr
