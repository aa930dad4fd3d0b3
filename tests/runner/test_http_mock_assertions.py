"""http_mock_assertions on a real run: the proxy's journal says what the agent really sent."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import yaml

from flakeproxy import load_config
from flakeproxy.runner.engine import run_contract_async
from tests.runner.world import world

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
        result = asyncio.run(run_contract_async(load_config(w.config), str(w.config), None))
    cell = result.cells[0]
    return cell.outcome, cell.reason


def test_one_email_passes(tmp_path: Path) -> None:
    assert outcome(tmp_path, 1) == ("pass", "request_count ok; last_request.body ok")


def test_an_agent_that_retries_twice_fails(tmp_path: Path) -> None:
    assert outcome(tmp_path, 3) == ("fail", "request_count is 3, expected 1")
