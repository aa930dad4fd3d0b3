"""Anchor-style session files (input + tool_responses only) replay; bad files are one-line errors (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.runner.world import world

ANCHOR = {
    "id": "quote-outage-regression",
    "input": "What is AAPL trading at?",
    "tool_responses": [
        {
            "tool": "market_data_api",
            "response": {"symbol": "AAPL", "price": 42.17, "currency": "USD", "source": "replayed feed"},
            "status": 200,
            "latency_ms": 5,
        }
    ],
}


def replay_cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flakeproxy", "replay", "run", "-c", str(config), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.timeout(150)
@pytest.mark.proxy_child  # replay, end to end
def test_an_anchor_file_with_only_input_and_tool_responses_replays(tmp_path: Path) -> None:
    anchor = tmp_path / "anchor.yaml"
    anchor.write_text(yaml.safe_dump(ANCHOR, sort_keys=False))
    with world(tmp_path) as w:
        done = replay_cli(w.config, str(anchor), "--llm", "live", "-o", str(tmp_path / "out"))
        quotes, llm = w.upstream.count("/v1/quotes"), w.upstream.count("/v1/chat/completions")
        sent = [json.loads(r.body) for r in w.upstream.requests if r.path == "/v1/chat/completions"]
    assert done.returncode == 0, done.stderr + done.stdout
    assert quotes == 0, "the tool's upstream was called: the listed response was not served"
    assert llm == 1 and "42.17" in sent[0]["messages"][0]["content"], "the agent did not get the listed response"
    result = json.loads((tmp_path / "out" / "results.json").read_text())
    session = result["replay"]["sessions"][0]
    assert (session["session"], session["outcome"], session["served"], session["unused"]) == (
        "quote-outage-regression",
        "pass",
        1,
        0,
    )
    assert (
        "PASS  quote-outage-regression: 2 invariant(s) hold" in done.stdout
        and "replay score 100.0% PASS" in done.stdout
    )
    # the reports of a replay run, as contract run writes them: a testcase per session in junit.xml
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert '<testsuite name="replay sessions" tests="1" failures="0" errors="0"' in junit
    assert 'classname="replay" name="quote-outage-regression"' in junit
    assert "| PASS | quote-outage-regression | 1 |" in (tmp_path / "out" / "summary.md").read_text()
    assert 'id="replay"' in (tmp_path / "out" / "report.html").read_text()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        (
            "id: s1\ninput: hi\ntool_responses:\n  - response: {a: 1}\n",
            "line 4: tool_responses[0].tool: missing required key 'tool'; add tool: ...",
        ),
        (  # a session file may be anything (a config can point at any file): its keys and values are not echoed
            "id: s1\ninput: hi\ntool_response: []\n",
            "line 3: (top level): an unknown key (did you mean 'tool_responses'?); valid keys: id, input",
        ),
        (
            "id: s1\ninput: hi\ntool_responses:\n  - {tool: nope}\n",
            "session 's1': tool_responses tool 'nope' is not a target; valid: llm, market_data_api",
        ),
        ("- just a list item\n", "line 1: a session must be a mapping with id: and input:, got a str"),
    ],
)
def test_a_bad_session_file_is_one_line_and_exit_2(tmp_path: Path, text: str, wanted: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with world(tmp_path) as w:
        done = replay_cli(w.config, str(bad))
        # the same file in replays.sources: validate says so, as ci and replay run would (not "valid", then exit 2)
        w.config.write_text(yaml.safe_dump({**w.data, "replays": {"sources": ["bad.yaml"]}}))
        validate = [sys.executable, "-m", "flakeproxy", "validate", "-c", str(w.config)]
        checked = subprocess.run(validate, capture_output=True, text=True, timeout=60)
    for out in (done, checked):
        assert out.returncode == 2, out.stdout + out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {bad}") and wanted in lines[0], out.stderr
