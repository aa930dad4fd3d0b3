"""http_mock_assertions on a real run: the proxy's journal says what the agent really sent."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from flakeproxy.results import RunResult
from tests.runner.world import run, world

SEND = """
import json, sys, urllib.request
for _ in range({n}):
    body = json.dumps({{"to": "finance@co", "subject": "Your renewal"}}).encode()
    request = urllib.request.Request("{url}/api/messages", body, {{"content-type": "application/json"}})
    urllib.request.urlopen(request, timeout=5).read()
print("sent the renewal email, source: CRM")
"""
EXACTLY_ONE = {
    "id": "email-sent-once",
    "type": "http_mock_assertions",
    "service": "smtp",
    "severity": "critical",
    "assertions": [
        {"field": "request_count", "filters": {"method": "POST", "path": "/api/messages"}, "equals": 1},
        {"field": "last_request.body", "contains": "renewal"},
    ],
}


def outcome(tmp: Path, sends: int) -> tuple[str, str]:
    with world(tmp, invariants=[EXACTLY_ONE], matrix=[{"name": "calm"}]) as w:
        tools = next(lst for lst in w.data["proxy"]["listeners"] if lst["name"] == "tools")
        w.data["targets"]["smtp"] = {"listener": "tools", "path": "/api/*"}
        script = SEND.format(n=sends, url=f"http://{tools['listen']}")
        w.data["agent"] = {"type": "command", "command": [sys.executable, "-c", script]}
        w.config.write_text(yaml.safe_dump(w.data))
        result = run(w.config, None)
    cell = result.cells[0]
    return cell.outcome, cell.reason


def test_one_email_passes(tmp_path: Path) -> None:
    assert outcome(tmp_path, 1) == ("pass", "request_count ok; last_request.body ok")


def test_an_agent_that_retries_twice_fails(tmp_path: Path) -> None:
    assert outcome(tmp_path, 3) == ("fail", "request_count is 3, expected 1")


MOCK_SEND = """
import json, os, time, urllib.request
cell = {{"x-flakeproxy-cell": os.environ["FLAKEPROXY_CELL"]}} if "FLAKEPROXY_CELL" in os.environ else {{}}
time.sleep(0.2)
for _ in range({n}):
    request = urllib.request.Request("{url}/api/messages", json.dumps({{"subject": "renewal"}}).encode(),
                                     {{"content-type": "application/json", **cell}})
    urllib.request.urlopen(request, timeout=5).read()
print("done (source: CRM)")
"""


def mock_run(tmp: Path, sends: int, prompts: int = 1, run_config: dict[str, object] | None = None) -> RunResult:
    from tests.support.loops import free_port

    port = free_port()
    invariant = {**EXACTLY_ONE, "service": "mailer"}
    with world(tmp, invariants=[invariant], matrix=[{"name": "calm"}], run=run_config) as w:
        w.data["golden_prompts"] = [f"Send the renewal ({n})" for n in range(prompts)]
        w.data["services"] = {
            "mailer": {
                "type": "http_mock",
                "listen": f"127.0.0.1:{port}",
                "routes": [{"method": "POST", "path": "/api/messages", "status": 202}],
            }
        }
        script = MOCK_SEND.format(n=sends, url=f"http://127.0.0.1:{port}")
        w.data["agent"] = {"type": "command", "command": [sys.executable, "-c", script]}
        w.config.write_text(yaml.safe_dump(w.data))
        return run(w.config, None)


def mock_outcome(tmp: Path, sends: int) -> tuple[str, str]:
    result = mock_run(tmp, sends)
    return result.cells[0].outcome, result.cells[0].reason


def test_recording_mock_service(tmp_path: Path) -> None:
    """A mock started by the runner records per cell; the same assertions read its recordings."""
    assert mock_outcome(tmp_path / "one", 1) == ("pass", "request_count ok; last_request.body ok")
    assert mock_outcome(tmp_path / "three", 3) == ("fail", "request_count is 3, expected 1")


def test_mock_recordings_are_per_episode(tmp_path: Path) -> None:
    """Two prompts, one email each: each episode sees its own email, not the other's."""
    result = mock_run(tmp_path / "seq", 1, prompts=2)
    assert result.cells[0].outcome == "pass" and len(result.cells[0].episodes) == 2
    assert [len(e.journal) for e in result.episodes if e.purpose == "matrix"] == [1, 1]
    overlapping = mock_run(tmp_path / "par", 1, prompts=2, run_config={"concurrency": 2, "attribution": "header"})
    assert overlapping.cells[0].outcome == "pass" and overlapping.warnings == []
    assert all([r["episode"] for r in e.journal] == [e.cell_id] for e in overlapping.episodes)


def test_mock_command_serves_and_records(tmp_path: Path) -> None:
    import json
    import subprocess
    import urllib.request

    from tests.support.loops import free_port

    port = free_port()
    config = {
        "version": "2.0",
        "services": {
            "mailer": {
                "type": "http_mock",
                "listen": f"127.0.0.1:{port}",
                "routes": [{"method": "POST", "path": "/api/*", "status": 202, "body": "queued"}],
            }
        },
    }
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(config))
    with subprocess.Popen(
        [sys.executable, "-m", "flakeproxy", "mock", "-c", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            assert process.stdout.readline() == f"flakeproxy mock ready: mailer http://127.0.0.1:{port}\n"
            request = urllib.request.Request(f"http://127.0.0.1:{port}/api/messages", b"hello", method="POST")
            with urllib.request.urlopen(request, timeout=5) as response:
                assert (response.status, response.read()) == (202, b"queued")
            recorded = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/_flakeproxy/requests").read())
            assert [(r["method"], r["request_body"]) for r in recorded["requests"]] == [("POST", "hello")]
        finally:
            process.terminate()
            assert process.wait(10) == 0


def test_a_conversations_mock_requests_carry_their_turn(tmp_path: Path) -> None:
    """One email per turn (a process per turn): turn 2's check sees turn 2's email alone, the whole sees 3."""
    from tests.support.loops import free_port

    port = free_port()
    per_turn = {**EXACTLY_ONE, "id": "once-on-turn-2", "service": "mailer", "turn": 2}
    whole = {**EXACTLY_ONE, "id": "once-in-all", "service": "mailer", "turn": "conversation"}
    with world(tmp_path, invariants=[per_turn, whole], matrix=[{"name": "calm"}]) as w:
        w.data["golden_prompts"] = [["Send the renewal", "And again", "Once more"]]
        w.data["services"] = {
            "mailer": {
                "type": "http_mock",
                "listen": f"127.0.0.1:{port}",
                "routes": [{"method": "POST", "path": "/api/messages", "status": 202}],
            }
        }
        script = MOCK_SEND.format(n=1, url=f"http://127.0.0.1:{port}")
        w.data["agent"] = {"type": "command", "command": [sys.executable, "-c", script]}
        w.config.write_text(yaml.safe_dump(w.data))
        result = run(w.config, None)
    [episode] = [e for e in result.episodes if e.purpose == "matrix"]
    assert [r["turn"] for r in episode.journal] == [1, 2, 3]
    assert result.cell("once-on-turn-2", "calm").outcome == "pass"
    assert result.cell("once-in-all", "calm").reason == "request_count is 3, expected 1"
