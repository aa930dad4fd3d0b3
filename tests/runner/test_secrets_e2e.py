"""Planted secrets never reach an artifact of a real contract run through the real proxy: not
results.json, not the proxy's journal (GET /journal on the control API), not the mock's recordings, not
the run's output. The agent sends each secret the way real agents leak them: an Authorization header, a
custom auth header, an api_key query parameter, a JSON password, a form token, and names the config's
`redact:` lists; the mock echoes the bearer token in its answer.

And each place that keeps records of an episode redacts its own, and scrubs the secrets it saw from the agent's
answers and spans: a python agent's wrapped tool, a mock service and the proxy each get a key of their own, which
the agent repeats in every answer and in a span attribute."""

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
from tests.support.upstream import RunningUpstream

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


# --- every port redacts its own records: a python agent's wrapped tool, a mock service, the proxy ---------------

#: one secret per port, none shaped like a credential (the span receiver's own redaction would catch those)
TOOL_KEY, MOCK_KEY, LLM_KEY = (f"{PLANTED}-{port}" for port in ("tool", "mock", "llm"))

LEAKY_AGENT = '''
"""A python agent that hands each of its secrets to a different port, then repeats them all in its answer and
in an attribute of its own span (exported at once to the proxy's OTLP receiver)."""
import json
import urllib.request

from opentelemetry import propagate
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint="{otlp}/v1/traces")))
TRACER = PROVIDER.get_tracer("leaky-agent")


def lookup(symbol, api_key):
    return {{"symbol": symbol, "price": 189.5}}


def _post(url, body, headers):
    propagate.inject(headers)  # traceparent and baggage: the proxy and the mock tell the episode by them
    request = urllib.request.Request(url, json.dumps(body).encode(), {{"content-type": "application/json", **headers}})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def run(prompt):
    with TRACER.start_as_current_span("leaky-turn") as span:
        lookup("AAPL", api_key="{tool}")
        _post("{mock}/v1/charge", {{"amount": 1}}, {{"x-api-key": "{mock_key}"}})
        # the tool's and the mock's keys, unnamed, in the prompt: scrubbed there too, though only they saw them
        messages = [{{"role": "user", "content": prompt + " (keys {tool} {mock_key})"}}]
        chat = {{"model": "m", "messages": messages}}
        _post("{llm}/v1/chat/completions", chat, {{"authorization": "Bearer {llm_key}"}})
        said = "keys: tool {tool}, mock {mock_key}, llm {llm_key}"
        span.set_attribute("agent.echo", said)
    return said + " (source: my tools)"


def reset():
    return None
'''


def _leaky_config(tmp: Path, upstream: str) -> Path:
    llm, mock, otlp = (f"127.0.0.1:{free_port()}" for _ in range(3))
    code = LEAKY_AGENT.format(
        otlp=f"http://{otlp}", mock=f"http://{mock}", llm=f"http://{llm}", tool=TOOL_KEY, mock_key=MOCK_KEY,
        llm_key=LLM_KEY,
    )  # fmt: skip
    (tmp / "leaky_agent.py").write_text(code)
    data = {
        "version": "2.0",
        "agent": {
            "type": "python",
            "callable": "leaky_agent:run",
            "tools": ["leaky_agent:lookup"],
            "reset_function": "leaky_agent:reset",
        },
        "proxy": {
            "admin": f"127.0.0.1:{free_port()}",
            "otlp": otlp,
            "listeners": [{"name": "llm", "listen": llm, "upstream": upstream}],
        },
        "targets": {"llm": {"listener": "llm", "api": "openai"}},
        "services": {
            "billing": {
                "type": "http_mock",
                "listen": mock,
                "routes": [{"method": "POST", "path": "/v1/charge", "body": '{"ok": true}'}],
            }
        },
        "golden_prompts": [["What is AAPL trading at?", "And again?"]],  # a conversation: it has a transcript
        "contract": {"name": "leaks", "invariants": [{"id": "cites", "type": "regex", "pattern": "source"}]},
        "chaos_matrix": [{"name": "calm"}],
        "run": {"seed": 5, "output": str(tmp / "out")},
    }
    path = tmp / "flakeproxy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.timeout(120)
def test_each_port_keeps_its_own_secrets_out_of_answers_transcripts_and_spans(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is in the dev tools")
    with RunningUpstream() as up:
        config = _leaky_config(tmp_path, up.url)
        out = cli(config, cwd=tmp_path)
        assert out.returncode == 0, out.stdout + out.stderr[-2000:]
        assert any(LLM_KEY in str(r.headers) for r in up.requests), "the key did reach the LLM"
    (episode,) = json.loads((tmp_path / "out" / "results.json").read_text())["episodes"]
    # the records are there, each redacted where it was made (so finding no secret means something)
    by_target = {e["targets"][0]: e for e in episode["journal"]}
    assert by_target["lookup"]["request_body"] == '{"args": ["AAPL"], "kwargs": {"api_key": "[redacted]"}}'
    assert by_target["billing"]["request_headers"]["x-api-key"] == "[redacted]"
    assert by_target["llm"]["request_headers"]["authorization"] == "[redacted]"
    said = "keys: tool [redacted], mock [redacted], llm [redacted]"
    assert episode["answer"] == f"{said} (source: my tools)"
    assert [turn["answer"] for turn in episode["transcript"]] == [f"{said} (source: my tools)"] * 2
    assert [s["attributes"]["agent.echo"] for s in episode["agent_spans"]] == [said] * 2
    artifacts = {name: (tmp_path / "out" / name).read_text() for name in ("results.json", "report.html", "summary.md")}
    artifacts |= {"junit.xml": (tmp_path / "out" / "junit.xml").read_text(), "run output": out.stdout + out.stderr}
    assert {name: text.count(PLANTED) for name, text in artifacts.items() if PLANTED in text} == {}
