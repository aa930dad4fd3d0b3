"""docs/getting-started.md, followed literally by a reader who has only that page: the config it shows, the
agent settings it exports and the commands it runs are read from its code blocks and used as written. The
reader's own agent is a small HTTP agent on the official openai SDK (tests.support.openai_agent); the only
changes are the ones a test on one machine needs: free ports instead of the page's, and the fake OpenAI and
quote API on loopback (the providers' real JSON) as the upstreams instead of api.openai.com and
quotes.example.com. A careful agent passes the contract; one that turns the LLM's error into its own HTTP 500
fails it, as the page says."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

from tests.conftest import REPO
from tests.support.loops import free_port, running_app
from tests.support.openai_agent import agent_routes
from tests.support.upstream import RunningUpstream, Upstream

PAGE = (REPO / "docs" / "getting-started.md").read_text()
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", PAGE, re.S | re.M)


def _lines(lang: str) -> list[str]:
    """The page's shell lines, comments dropped, in order."""
    lines = [line.split("#")[0].strip() for kind, block in BLOCKS if kind == lang for line in block.splitlines()]
    return [line for line in lines if line]


class Localized:
    """The page's addresses swapped for this machine's: each port of the page gets a free one, everywhere."""

    def __init__(self, agent_url: str, up: Upstream) -> None:
        self.ports: dict[str, str] = {}
        self.fixed = {
            "http://127.0.0.1:8000": agent_url,  # the reader's agent
            "https://api.openai.com": up.url,
            "https://quotes.example.com": up.url,
        }

    def __call__(self, text: str) -> str:
        for page_url, here in self.fixed.items():
            text = text.replace(page_url, here)
        return re.sub(r"127\.0\.0\.1:(87\d\d|8790)\b", self._swap, text)

    def _swap(self, m: re.Match[str]) -> str:
        return f"127.0.0.1:{self.ports.setdefault(m[1], str(free_port()))}"


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with RunningUpstream() as up:
        yield up


def test_the_page_has_the_steps_this_test_follows() -> None:
    shell = _lines("bash")
    assert shell[0] == "pip install ." and all(line.startswith(("export ", "flakeproxy ")) for line in shell[1:])
    assert [line for line in shell if line.startswith("flakeproxy ")] == [
        "flakeproxy contract validate -c flakeproxy.yaml",
        "flakeproxy contract run -c flakeproxy.yaml",
    ]
    assert len([block for kind, block in BLOCKS if kind == "yaml"]) == 1


def _run(folder: Path, line: str) -> subprocess.CompletedProcess[str]:
    """A `flakeproxy ...` line of the page, run with this Python's flakeproxy (the page's `pip install .`)."""
    args = [sys.executable, "-m", "flakeproxy", *shlex.split(line)[1:]]
    return subprocess.run(args, cwd=folder, capture_output=True, text=True, timeout=150)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("careful", [True, False], ids=["careful", "careless"])
def test_a_reader_gets_their_agent_under_a_passing_contract(upstream: Upstream, tmp_path: Path, careful: bool) -> None:
    settings: dict[str, str] = {}
    with running_app(agent_routes(settings, careful), "agent") as agent_url:
        local = Localized(agent_url, upstream)
        (tmp_path / "flakeproxy.yaml").write_text(local(next(b for kind, b in BLOCKS if kind == "yaml")))
        exports = dict(line.removeprefix("export ").split("=", 1) for line in _lines("bash") if line[:7] == "export ")
        settings.update({name: local(value) for name, value in exports.items()})
        settings["tool"] = settings["QUOTES_URL"] + "/v1"  # this agent's quote API lives under /v1
        outs = [_run(tmp_path, line) for line in _lines("bash") if line.startswith("flakeproxy ")]
    validate, run = outs
    assert validate.returncode == 0, validate.stderr
    assert upstream.count("/v1/quotes") and upstream.count("/v1/chat/completions")
    if careful:
        assert run.returncode == 0, run.stdout + run.stderr[-3000:]
        assert "resilience score 100.0%  PASS\n" in run.stdout
        shown = re.search(r"^```text\n(wrote .*)\n```", PAGE, re.M)
        assert shown and run.stderr.splitlines()[-1] == shown[1]  # the page shows what the run ends with
        assert (tmp_path / "flakeproxy-results" / "report.html").is_file()
    else:
        assert run.returncode == 1, run.stdout + run.stderr[-3000:]
        assert "critical invariant answers failed in scenario llm-down" in run.stdout


def test_the_page_lists_every_exit_code_a_run_has() -> None:
    """It stopped at 3; a run also exits 4 (inconclusive) and 5 (budget): flakeproxy.cli.exits lists them."""
    from flakeproxy.cli.exits import EXIT_CODES

    said = " ".join(PAGE.split("Exit code 0 is a pass", 1)[1].split("Open `report.html`", 1)[0].split())
    codes = {int(n) for n in re.findall(r"(?:^|, |\n)(\d) ", " ".join(EXIT_CODES.split("Exit codes:")[1].split()))}
    assert codes == {0, 1, 2, 3, 4, 5}, EXIT_CODES
    assert "1 a failed contract, 2 a wrong config, 3 an agent" in said and "4 inconclusive" in said, said
    assert "5 a `run.budget` crossed" in said, said


def test_what_the_page_says_redact_does_for_a_tool_that_returns_personal_data(tmp_path: Path) -> None:
    """A trial found full account numbers in every run's results.json: the page names `redact:`, and says what it
    covers and what not. Each claim, measured on a real run: the listed field is [redacted] in the tool's journal
    entry, while the answer keeps what the agent said (its leak check FAILs and the file shows it); a value the
    agent itself sent under a listed name is scrubbed from its answer, so a check for it is ERROR, never PASS, and
    the run's verdict names the leak."""
    import yaml
    from aiohttp import web

    from tests.runner.world import run, world

    shown = re.search(r"`(redact: \[[^\]]*\])`", PAGE)
    assert shown, "the page names no redact: list"
    received, sent = yaml.safe_load(shown[1])["redact"][:2]  # account_number (the tool's answer), iban (sent)
    number, iban = "DE44 5001 0517 5407 3249 31", "GB82WEST12345698765432"

    async def account(request: web.Request) -> web.Response:
        return web.json_response({received: number, "balance": "1,250.00"})

    agent = (
        "import os, urllib.request\n"
        f"url = os.environ['FLAKEPROXY_URL_TOOLS'] + '/accounts/1234?{sent}={iban}'\n"
        f"print('Your account: ' + urllib.request.urlopen(url).read().decode() + ', IBAN {iban}')\n"
    )
    checks = [
        {"id": "no-number", "type": "excludes_pattern", "patterns": [number], "severity": "critical"},
        {"id": "no-iban", "type": "excludes_pattern", "patterns": [iban], "severity": "critical"},
    ]
    with (
        running_app([web.get("/accounts/1234", account)], "accounts") as accounts,
        world(tmp_path, invariants=checks, matrix=[{"name": "calm"}]) as w,
    ):
        w.data["proxy"]["listeners"][0]["upstream"] = accounts
        w.data["agent"] = {"type": "command", "command": [sys.executable, "-c", agent], "reset_command": ["true"]}
        w.data["redact"] = [received, sent]
        w.config.write_text(yaml.safe_dump(w.data))
        result = run(w.config)
    [episode] = result.episodes
    [tool] = [e for e in episode.journal if "/accounts/" in e["url"]]
    assert number not in str(tool) and '"[redacted]"' in tool["response_body"], tool
    assert number in (episode.answer or "") and iban not in (episode.answer or ""), episode.answer
    outcomes = {c.invariant: c.outcome for c in result.cells}
    assert outcomes == {"no-number": "fail", "no-iban": "error"}, outcomes
    assert episode.scrubbed == 1
    [iban_cell] = [c for c in result.cells if c.invariant == "no-iban"]
    assert "repeated 1 secret value(s) this episode sent" in iban_cell.reason, iban_cell.reason
    assert result.score is not None and result.score.verdict == "FAIL"
    assert any(r.startswith("the agent leaked secrets: its answers repeated 1") for r in result.score.reasons)
