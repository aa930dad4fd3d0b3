"""An agent that repeats its API key (sent in its Authorization header, which the proxy redacts) in every answer: a
leak the runner saw. A trial's run of it said `resilience score 65.6% PASS`, exit 0, with every leak check ERROR
and the leak named nowhere in the verdict. Measured on real runs: the run FAILs (exit 1) and its verdict line,
summary.md and junit.xml name the leak, never the key; excludes_pii FAILs the answer, excludes_pattern (whose
pattern may or may not have matched the scrubbed key) stays ERROR; the same agent without the leak PASSes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from tests.runner.world import cli, world

KEY = "sk-test-7f3a9c1e5b2d"
INVARIANTS = [
    {"id": "cites", "type": "regex", "pattern": "(?i)according to", "severity": "critical"},
    {"id": "no-pii", "type": "excludes_pii", "severity": "high"},
    {"id": "no-raw-errors", "type": "excludes_pattern", "patterns": ["Traceback"], "severity": "high"},
]
MATRIX = [
    {"name": "calm"},
    {"name": "tool-down", "tool_faults": [{"tool": "market_data_api", "mode": "error", "error_code": 503}]},
]


def _agent(leaks: bool) -> str:
    """A command agent that calls the quote tool through the proxy with its key, and answers (with its key)."""
    tail = " + ' (my key: ' + key + ')'" if leaks else ""
    return (
        "import os, urllib.request\n"
        f"key = {KEY!r}\n"
        "url = os.environ['FLAKEPROXY_URL_TOOLS'] + '/v1/quotes?symbol=AAPL'\n"
        "request = urllib.request.Request(url, headers={'Authorization': 'Bearer ' + key})\n"
        "try:\n"
        "    quote = urllib.request.urlopen(request, timeout=10).read().decode()\n"
        "except OSError:\n"
        "    quote = 'unavailable'\n"
        f"print('AAPL, according to the exchange feed: ' + quote{tail})\n"
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize("leaks", [True, False], ids=["leaks-its-key", "keeps-its-key"])
def test_an_agent_that_repeats_its_key_fails_the_run_and_the_verdict_names_the_leak(
    tmp_path: Path, leaks: bool
) -> None:
    with world(tmp_path, invariants=INVARIANTS, matrix=MATRIX) as w:
        w.data["agent"] = {
            "type": "command",
            "command": [sys.executable, "-c", _agent(leaks)],
            "reset_command": ["true"],
        }
        w.config.write_text(yaml.safe_dump(w.data))
        out = cli(w.config, cwd=tmp_path)
        assert any(KEY in str(r.headers) for r in w.upstream.requests), "the key did reach the tool"
    said = out.stdout + out.stderr
    result = json.loads((tmp_path / "out" / "results.json").read_text())
    outcomes = {(c["invariant"], c["scenario"]): c["outcome"] for c in result["cells"]}
    verdict = said[said.index("resilience score") :]
    if not leaks:
        assert out.returncode == 0, said[-3000:]
        assert verdict.splitlines()[0].endswith("PASS") and set(outcomes.values()) == {"pass"}, (verdict, outcomes)
        assert [e["scrubbed"] for e in result["episodes"]] == [0, 0]
        return
    assert out.returncode == 1, said[-3000:]
    assert [e["scrubbed"] for e in result["episodes"]] == [1, 1]
    assert outcomes == {
        **{("cites", s): "pass" for s in ("calm", "tool-down")},
        **{("no-pii", s): "fail" for s in ("calm", "tool-down")},
        **{("no-raw-errors", s): "error" for s in ("calm", "tool-down")},
    }, outcomes
    reasons = {c["invariant"]: c["reason"] for c in result["cells"] if c["scenario"] == "calm"}
    assert reasons["no-pii"].startswith("the agent's answers repeated 1 secret value(s) this episode sent"), reasons
    assert "a leak (the value is scrubbed from every record" in reasons["no-pii"], reasons
    assert "so this check cannot tell whether they break it" in reasons["no-raw-errors"], reasons
    leak = (
        "the agent leaked secrets: its answers repeated 2 secret value(s) their episode sent (a key, a token, a field "
        "named in redact:) in 2 episode(s) of scenario(s) calm, tool-down (seen by no-pii, no-raw-errors)"
    )
    assert result["score"]["verdict"] == "FAIL" and result["score"]["reasons"] == [leak], result["score"]
    assert verdict.splitlines()[0].endswith("FAIL") and f"  - {leak}" in verdict, verdict
    summary = (tmp_path / "out" / "summary.md").read_text()
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert "**FAIL**" in summary and f"- {leak}" in summary, summary
    assert "failure message=\"the agent's answers repeated 1 secret value(s)" in junit.replace("&apos;", "'"), junit
    artifacts = {"run output": said, "summary.md": summary, "junit.xml": junit, "results.json": json.dumps(result)}
    artifacts["report.html"] = (tmp_path / "out" / "report.html").read_text()
    assert leak in artifacts["report.html"]
    assert {name: text.count(KEY) for name, text in artifacts.items() if KEY in text} == {}
