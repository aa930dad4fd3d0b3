"""Planted secrets never reach an artifact of a real contract run through the real proxy: not
results.json, not the proxy's journal (GET /journal on the control API), not the mock's recordings, not
the run's output. The agent sends each secret the way real agents leak them: an Authorization header, a
custom auth header, an api_key query parameter, a JSON password, a form token, and names the config's
`redact:` lists; the mock echoes the bearer token in its answer."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp import web

from tests.runner.world import cli
from tests.support.loops import free_port, running_app
from tests.support.proxy import Control

PLANTED = "PLANTED-9c41e7d2"
BUILT_IN = {k: f"{PLANTED}-{k}" for k in ("bearer", "custom", "query", "password", "form")}
CONFIGURED = {k: f"{PLANTED}-{k}" for k in ("tenant", "pin")}


def _agent(tools: str, configured: bool) -> list[web.RouteDef]:
    async def chat(request: web.Request) -> web.Response:
        await request.json()
        headers = {"Authorization": f"Bearer {BUILT_IN['bearer']}", "X-Custom-Auth": BUILT_IN["custom"]}
        login: dict[str, Any] = {"user": "u", "password": BUILT_IN["password"]}
        if configured:
            headers["X-Tenant-Ref"] = CONFIGURED["tenant"]
            login["profile"] = {"account_pin": CONFIGURED["pin"]}
        async with aiohttp.ClientSession(headers=headers, timeout=aiohttp.ClientTimeout(total=10)) as http:
            params = {"symbol": "AAPL", "api_key": BUILT_IN["query"]}
            async with http.get(f"{tools}/v1/quotes", params=params) as r:
                await r.read()
            async with http.post(f"{tools}/v1/login", json=login) as r:
                await r.read()
            async with http.post(f"{tools}/v1/form", data={"user": "u", "token": BUILT_IN["form"]}) as r:
                await r.read()
        return web.json_response({"reply": "Done, according to the market data source."})

    return [web.post("/chat", chat)]


@contextmanager
def _child(args: list[str], ready: str, cwd: Path) -> Iterator[None]:
    with subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None
            line = child.stdout.readline()  # the child's one ready line (it exits, closing stdout, on failure)
            assert line.startswith(ready), (line, child.stderr.read() if child.poll() is not None else "")
            yield
        finally:
            child.terminate()
            child.wait(10)


def _config(tmp: Path, agent: str, tools_port: int, mock_port: int, admin: str, configured: bool) -> Path:
    mock_body = json.dumps({"price": 189.5, "note": f"authorized with {BUILT_IN['bearer']}"})
    data = {
        "version": "2.0",
        "agent": {"type": "http", "endpoint": f"{agent}/chat", "request_template": {"message": "{prompt}"}},
        "proxy": {
            "admin": admin,
            "admin_url": f"http://{admin}",
            "listeners": [
                {"name": "tools", "listen": f"127.0.0.1:{tools_port}", "upstream": f"http://127.0.0.1:{mock_port}"}
            ],
        },
        "targets": {"quotes": {"listener": "tools", "path": "/v1/quotes*"}},
        "services": {
            "tools_api": {
                "type": "http_mock",
                "listen": f"127.0.0.1:{mock_port}",
                "routes": [
                    {
                        "method": "GET",
                        "path": "/v1/quotes",
                        "body": mock_body,
                        "headers": {"content-type": "application/json"},
                    },
                    {"method": "POST", "path": "/v1/login", "body": "{}"},
                    {"method": "POST", "path": "/v1/form", "body": "ok"},
                ],
            }
        },
        "golden_prompts": ["What is AAPL trading at?"],
        "contract": {
            "name": "secrets",
            "invariants": [
                {"id": "cites", "type": "regex", "pattern": "(?i)source", "severity": "critical"},
                {
                    "id": "logged-in-once",
                    "type": "http_mock_assertions",
                    "service": "tools_api",
                    "severity": "high",
                    "assertions": [
                        {"field": "request_count", "filters": {"method": "POST", "path": "/v1/login"}, "equals": 1}
                    ],
                },
            ],
        },
        "chaos_matrix": [
            {"name": "no-chaos"},
            {"name": "quotes-down", "tool_faults": [{"tool": "quotes", "mode": "error", "error_code": 503}]},
        ],
        "run": {"seed": 3, "output": str(tmp / "out")},
        **({"redact": ["X-Tenant-Ref", "account_pin"]} if configured else {}),
    }
    path = tmp / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _artifacts(tmp: Path, configured: bool) -> dict[str, str]:
    tools_port, mock_port, admin = free_port(), free_port(), f"127.0.0.1:{free_port()}"
    with running_app(_agent(f"http://127.0.0.1:{tools_port}", configured), "secret-agent") as agent:
        config = _config(tmp, agent, tools_port, mock_port, admin, configured)
        flakeproxy = [sys.executable, "-m", "flakeproxy"]
        with (
            _child([*flakeproxy, "proxy", "-c", str(config)], "flakeproxy proxy ready", tmp),
            _child([*flakeproxy, "mock", "-c", str(config)], "flakeproxy mock ready", tmp),
        ):
            out = cli(config, cwd=tmp)
            assert out.returncode == 0, out.stdout + out.stderr[-2000:]
            journal = json.dumps(Control(f"http://{admin}").journal())
            with urllib.request.urlopen(f"http://127.0.0.1:{mock_port}/_flakeproxy/requests", timeout=5) as r:
                recordings = r.read().decode()
    return {
        "results.json": (tmp / "out" / "results.json").read_text(),
        "proxy journal": journal,
        "mock recordings": recordings,
        "run output": out.stdout + out.stderr,
    }


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "configured",
    [False, True],
    ids=["built-in-names", "configured-names"],
)
def test_planted_secrets_appear_in_no_artifact(tmp_path: Path, configured: bool) -> None:
    artifacts = _artifacts(tmp_path, configured)
    # the artifacts do hold the traffic (so finding no secret means something)
    for name in ("results.json", "proxy journal", "mock recordings"):
        assert "/v1/login" in artifacts[name] and "[redacted]" in artifacts[name], name
    assert "authorized with [redacted]" in artifacts["results.json"]  # the mock's echo of the bearer token
    leaks = {name: text.count(PLANTED) for name, text in artifacts.items() if PLANTED in text}
    assert leaks == {}
