"""`flakeproxy init`: the config it writes validates as written, for every agent type and provider, in both
modes; it says what to change in the agent; it refuses to overwrite; it asks only on a terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flakeproxy.cli.main import main
from flakeproxy.config import load_config
from flakeproxy.config.can_fail import validate_warnings
from flakeproxy.starter import PROVIDERS


def init(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(["init", *args])
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out, out.err


def test_yes_writes_a_config_that_validates_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "flakeproxy.yaml"
    code, out, err = init(capsys, "--yes", "-c", str(path))
    assert code == 0 and err == ""
    config = load_config(path)
    assert config.agent is not None and config.agent.type == "http" and config.contract is not None
    assert [s.name for s in config.matrix] == ["no-chaos", "llm-rate-limited", "llm-down", "llm-truncated", "llm-slow"]
    assert config.targets["openai"].api == "openai" and config.proxy.listeners[0].upstream == "https://api.openai.com"
    assert config.scoring.min_resilience == 80 and validate_warnings(config) == []  # a gate that can fail
    assert out.splitlines()[0].startswith(f"wrote {path}: http agent, 1 LLM API(s), 0 tool API(s); 6 invariants x 5")
    assert "  OPENAI_BASE_URL=http://127.0.0.1:8701/v1\n" in out
    assert f"  flakeproxy contract run -c {path}" in out
    text = path.read_text()
    assert text.startswith("# Written by `flakeproxy init`: an HTTP agent that calls openai.\n")
    assert f"# Run it:    flakeproxy contract run -c {path}  " in text and text.count("\n#") >= 5


@pytest.mark.parametrize("mode", ["--base-urls", "--forward"])
def test_stream_marks_the_llm_targets_and_cuts_a_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    path = tmp_path / "c.yaml"
    code, out, err = init(capsys, "-y", "-c", str(path), "--stream", "--provider", "openai,gemini", mode)
    assert (code, err) == (0, "")
    config = load_config(path)
    assert config.targets["openai"].stream and config.targets["gemini"].stream
    names = [s.name for s in config.matrix]
    assert names == ["no-chaos", "llm-rate-limited", "llm-down", "llm-truncated", "llm-stream-cut", "llm-slow"]
    assert validate_warnings(config) == []  # the stream fault aims at targets that stream: nothing to warn about
    assert "runs 6 scenarios" in out and "6 invariants x 6 scenarios" in out
    code, out, err = init(capsys, "-y", "-c", str(tmp_path / "d.yaml"))
    assert not load_config(tmp_path / "d.yaml").targets["openai"].stream and "runs 5 scenarios" in out


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("agent", ["http", "command", "python"])
@pytest.mark.parametrize("mode", ["--base-urls", "--forward"])
def test_every_agent_type_provider_and_mode_validates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, provider: str, mode: str
) -> None:
    path = tmp_path / "c.yaml"
    extra = {"http": [], "command": ["--command", "node agent.js"], "python": ["--tool-callable", "agent:search"]}
    args = ["-y", "-c", str(path), "--agent", agent, "--provider", provider, mode, *extra[agent]]
    code, out, err = init(capsys, *args, "--tool", "https://tools.example.com/v1", "--tool", "http://127.0.0.1:9000")
    assert (code, err) == (0, "")
    config = load_config(path)
    assert config.agent is not None and config.agent.type == agent
    target = provider.replace("-", "_")
    assert config.targets[target].api == provider
    assert {"tools_example_com", "tool_127_0_0_1"} <= set(config.targets)
    assert len(config.matrix) == 5 and config.matrix[-1].name == "tool-down"
    assert [w for w in validate_warnings(config) if not w.startswith("proxy.forward")] == []
    if mode == "--forward":
        assert config.proxy.forward == "127.0.0.1:8700" and config.proxy.listeners == []
        assert config.targets[target].listener == "forward" and config.targets[target].host
        assert config.proxy.forward_allow == ["127.0.0.1"]  # the loopback tool is relayed only when allowed
        assert "HTTPS_PROXY=http://127.0.0.1:8700" in out and "flakeproxy ca -c" in out and "--bundle" in out
    else:
        variable = {"openai": "OPENAI", "openai-responses": "OPENAI", "anthropic": "ANTHROPIC"}.get(provider)
        assert f"{variable or 'GOOGLE_GEMINI'}_BASE_URL=" in out
        assert "its base URL for https://tools.example.com/v1: http://127.0.0.1:8702/v1" in out
    if agent == "command" and mode == "--base-urls":
        assert config.agent.type == "command" and config.agent.command == ["node", "agent.js"]
        assert any(v.startswith("{url:") for v in config.agent.env.values())


def test_all_four_providers_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    code, out, _ = init(capsys, "-y", "-c", str(path), "--provider", "openai,anthropic", "--provider", "gemini",
                        "--provider", "openai-responses")  # fmt: skip
    assert code == 0
    config = load_config(path)
    assert [t.api for t in config.targets.values()] == ["openai", "anthropic", "gemini", "openai-responses"]
    # the two OpenAI APIs share one listener (one OPENAI_BASE_URL), told apart by path
    assert config.targets["openai"].listener == config.targets["openai_responses"].listener == "openai"
    assert (config.targets["openai"].path, config.targets["openai_responses"].path) == (
        "/v1/chat/completions*",
        "/v1/responses*",
    )
    assert [lst.name for lst in config.proxy.listeners] == ["openai", "anthropic", "gemini"]
    assert out.count("_BASE_URL=") == 3


def test_the_llm_upstream_can_be_a_gateway_or_a_local_fake(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--llm-upstream: where the LLM listener forwards (a new user had to edit the file to reach a fake LLM)."""
    one, two, forward = (tmp_path / f"{n}.yaml" for n in ("one", "two", "forward"))
    assert init(capsys, "-y", "-c", str(one), "--llm-upstream", "http://127.0.0.1:9000/")[0] == 0
    assert [lst.upstream for lst in load_config(one).proxy.listeners] == ["http://127.0.0.1:9000"]
    args = ["-y", "-c", str(two), "--provider", "openai,anthropic", "--llm-upstream", "anthropic=http://10.0.0.5:8080"]
    assert init(capsys, *args)[0] == 0
    upstreams = {lst.name: lst.upstream for lst in load_config(two).proxy.listeners}
    assert upstreams == {"openai": "https://api.openai.com", "anthropic": "http://10.0.0.5:8080"}
    code, out, _ = init(capsys, "-y", "-c", str(forward), "--forward", "--llm-upstream", "http://127.0.0.1:9000")
    config = load_config(forward)
    assert code == 0 and config.targets["openai"].host == "127.0.0.1" and config.proxy.forward_allow == ["127.0.0.1"]
    assert "  HTTP_PROXY=http://127.0.0.1:8700\n" in out  # the agent calls it over plain HTTP, through the proxy


@pytest.mark.parametrize("mode", ["--base-urls", "--forward"])
def test_base_port_moves_every_port(tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str) -> None:
    """Three trials hand-edited the ports (8700, 8701..., 8790 were taken): --base-port N moves them all, the
    config and what init prints alike."""
    path = tmp_path / "c.yaml"
    args = ["-y", "-c", str(path), mode, "--base-port", "9700", "--provider", "openai,anthropic"]
    code, out, err = init(capsys, *args, "--tool", "http://127.0.0.1:9000")
    assert (code, err) == (0, "")
    config = load_config(path)
    assert config.proxy.admin == "127.0.0.1:9790"
    if mode == "--forward":
        assert config.proxy.forward == "127.0.0.1:9700" and "HTTPS_PROXY=http://127.0.0.1:9700" in out
    else:
        assert [lst.listen for lst in config.proxy.listeners] == ["127.0.0.1:9701", "127.0.0.1:9702", "127.0.0.1:9703"]
        assert (
            "  OPENAI_BASE_URL=http://127.0.0.1:9701/v1\n" in out
            and "http://127.0.0.1:9000: http://127.0.0.1:9703" in out
        )
    assert "127.0.0.1:87" not in path.read_text() + out


def test_base_port_says_what_it_moves_and_refuses_a_port_past_the_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "the control API on N+90" in " ".join(init(capsys, "--help")[1].split())
    code, _, err = init(capsys, "-y", "-c", str(tmp_path / "c.yaml"), "--base-port", "65500")
    assert code == 2 and len(err.splitlines()) == 1 and "--base-port" in err and "65445" in err, err


def test_a_prompt_with_dollars_and_quotes_is_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    prompt = 'Is "${HOME}" worth $5?'
    assert init(capsys, "-y", "-c", str(path), "--prompt", prompt)[0] == 0
    assert load_config(path, environ={}).golden_prompts == [prompt]


def test_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "flakeproxy.yaml"
    path.write_text("mine\n")
    code, out, err = init(capsys, "-y", "-c", str(path))
    assert (code, out) == (2, "")
    assert err == f"error: {path} already exists; flakeproxy init never overwrites: remove it, or pass -c NEW.yaml\n"
    assert path.read_text() == "mine\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tool", "ftp://files.example.com"], "--tool: 'ftp://files.example.com' is not a base URL; give http(s)"),
        (["--provider", "mistral"], "--provider: unknown 'mistral'; choose one or more of openai, anthropic, gemini"),
        (["--endpoint", "localhost:8000"], "--endpoint: must be an http:// or https:// URL"),
        (["--agent", "python", "--callable", "agent.run"], "--callable: must be MODULE:ATTRIBUTE"),
        (["--llm-upstream", "http://127.0.0.1:9000/v1"], "--llm-upstream: give scheme://HOST[:PORT], without a path"),
        (  # an LLM host's example, not an agent's chat endpoint (a new user was shown http://127.0.0.1:8000/chat)
            ["--llm-upstream", "127.0.0.1:9000"],
            "--llm-upstream: must be an http:// or https:// URL of the LLM API's host, e.g. https://api.openai.com, or "
            "http://127.0.0.1:11434 for a local model server, got '127.0.0.1:9000'",
        ),
        (["--llm-upstream", "gemini=http://127.0.0.1:9"], "--llm-upstream: an upstream for gemini, not one of its LLM"),
        (
            ["--provider", "openai,gemini", "--llm-upstream", "http://127.0.0.1:9"],
            "--llm-upstream: 'http://127.0.0.1:9' is for which of its LLM APIs? give PROVIDER=URL",
        ),
    ],
)
def test_bad_answers_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = init(capsys, "-y", "-c", str(tmp_path / "c.yaml"), *args)
    assert code == 2 and len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "c.yaml").exists()


def test_never_waits_for_input_when_stdin_is_not_a_terminal(tmp_path: Path) -> None:
    """No --yes, no flags, stdin an open pipe that never speaks (as in CI): the defaults, at once."""
    child = subprocess.Popen(
        [sys.executable, "-m", "flakeproxy", "init"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        code = child.wait(timeout=30)
    finally:
        child.kill()
        out, err = child.communicate()
    assert code == 0, err
    assert out.startswith("wrote flakeproxy.yaml: http agent") and load_config(tmp_path / "flakeproxy.yaml")


class Terminal:
    """A child on a real pseudo-terminal: read until a text shows up (with a deadline), then answer."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        self.child = subprocess.Popen(args, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, timeout_s: float = 20) -> None:
        deadline = time.monotonic() + timeout_s
        while text not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"no {text!r} on the terminal; it shows:\n{self.seen}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    self.seen += os.read(self.master, 4096).decode(errors="replace")
                except OSError:  # the child closed the terminal
                    assert text in self.seen, f"no {text!r} on the terminal; it shows:\n{self.seen}"

    def answer(self, text: str) -> None:
        os.write(self.master, (text + "\n").encode())

    def close(self) -> int:
        code = self.child.wait(timeout=20)
        os.close(self.master)
        return code


def test_on_a_terminal_it_asks_what_no_flag_gave(tmp_path: Path) -> None:
    term = Terminal([sys.executable, "-m", "flakeproxy", "init", "--provider", "anthropic"], tmp_path)
    try:
        term.expect("How does flakeproxy reach your agent? (http, command, python) [http]: ")
        term.answer("commnd")  # a typo: asked again
        term.expect("is not one of")
        term.answer("command")
        term.expect("The command that runs it (the prompt on stdin, the answer on stdout) [python agent.py]: ")
        term.answer("node agent.js")
        term.expect("The base URLs of the tool APIs it calls (comma-separated; none: -) [-]: ")
        term.answer("https://quotes.example.com/v1")
        term.expect("The URLs of the MCP servers it calls over HTTP, e.g. http://127.0.0.1:9000/mcp (none: -) [-]: ")
        term.answer("")  # none: no question about its tools
        term.expect("Can you point its base URLs at flakeproxy? (no: it goes through HTTPS_PROXY and trusts a CA)")
        term.answer("")
        term.expect("Does it ask its LLM for streamed (SSE) answers? [y/N]: ")
        term.answer("y")
        term.expect("A task to give it (a golden prompt) [What can you help me with?]: ")
        term.answer("What is AAPL trading at?")
        term.expect("flakeproxy contract run")
    finally:
        code = term.close()
    assert code == 0, term.seen
    assert "The LLM APIs it calls" not in term.seen  # --provider gave it
    config = load_config(tmp_path / "flakeproxy.yaml")
    assert config.agent is not None and config.agent.type == "command" and config.agent.command == ["node", "agent.js"]
    assert list(config.targets) == ["anthropic", "quotes_example_com"] and config.proxy.forward is None
    assert config.targets["anthropic"].stream and "llm-stream-cut" in [s.name for s in config.matrix]
    assert config.golden_prompts == ["What is AAPL trading at?"]


def test_the_reset_comment_is_on_the_agents_own_host(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    code, _, _ = init(capsys, "-y", "-c", str(path), "--endpoint", "http://127.0.0.1:47210/api/chat")
    assert code == 0
    assert "  # reset_endpoint: http://127.0.0.1:47210/reset   # POSTed before each episode" in path.read_text()


@pytest.mark.parametrize("mode", ["--base-urls", "--forward"])
def test_an_mcp_server_gets_a_listener_and_a_target_per_tool_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    """A trial's MCP server given as --tool became a plain target whose 503 hit only the handshake (initialize,
    server/discover). --mcp URL puts a listener in front of it, --mcp-tool NAME a target per tool, and a scenario
    answers the first one's calls with isError."""
    path = tmp_path / "c.yaml"
    args = ["-y", "-c", str(path), mode, "--mcp", "http://127.0.0.1:9000/mcp", "--mcp-tool", "get_quote,get_news"]
    code, out, err = init(capsys, *args)
    assert (code, err) == (0, "")
    config = load_config(path)
    assert {n: t.mcp_tool for n, t in config.targets.items() if t.mcp_tool} == {
        "get_quote": "get_quote", "get_news": "get_news"}  # fmt: skip
    [scenario] = [s for s in config.matrix if s.name == "mcp-tool-error"]
    assert scenario.tool_faults[0].tool == "get_quote" and scenario.tool_faults[0].kind == "is_error"
    assert validate_warnings(config) == []
    if mode == "--base-urls":
        assert "  its base URL for http://127.0.0.1:9000/mcp: http://127.0.0.1:8702/mcp\n" in out
        assert config.targets["get_quote"].listener == "mcp_127_0_0_1"
    else:
        assert config.targets["get_quote"].listener == "forward" and "127.0.0.1" in config.proxy.forward_allow
    code, out, err = init(capsys, "-y", "-c", str(tmp_path / "d.yaml"), "--mcp", "http://127.0.0.1:9000/mcp")
    assert code == 0 and "its MCP tools are not targets yet: name the ones to break with --mcp-tool NAME" in out
    assert "mcp-tool-error" not in (tmp_path / "d.yaml").read_text()
