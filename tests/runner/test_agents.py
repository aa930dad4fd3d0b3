"""The agent adapters against real agents: an HTTP server, a child process, a Python callable."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from flakeproxy import InfrastructureError
from flakeproxy.config.agent import CommandAgent, HttpAgent
from flakeproxy.runner.agents.base import Reply
from flakeproxy.runner.agents.command import CommandAdapter
from flakeproxy.runner.agents.http import HttpAdapter
from tests.support.loops import free_port, running_app

PROMPT = 'He said "hi"\nthen left. Ünïcödé ✓ {braces} \\ back'


@contextmanager
def http_agent() -> Iterator[tuple[str, list[Any]]]:
    seen: list[Any] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        seen.append(body)
        mode = request.match_info["mode"]
        if mode == "json":
            return web.json_response({"reply": body["input"]["text"], "error": None})
        if mode == "nested":
            return web.json_response({"data": {"answers": [{"text": "second"}, {"text": "deep"}]}})
        if mode == "null":
            return web.json_response({"reply": None, "error": "no quote"})
        if mode == "fail":
            return web.json_response({"error": "boom"}, status=503)
        if mode == "sse":
            response = web.StreamResponse(headers={"content-type": "text/event-stream"})
            await response.prepare(request)
            for word in ("Hello", " there", "!", None):  # a last piece with null at the path, as OpenAI's has
                await response.write(f"data: {json.dumps({'delta': word})}\n\n".encode())
            await response.write(b"data: [DONE]\n\n")
            return response
        if mode == "ndjson":
            lines = "".join(json.dumps({"delta": w}) + "\n" for w in ("a", "b", "c"))
            return web.Response(text=lines, content_type="application/x-ndjson")
        await asyncio.sleep(5)
        return web.json_response({})

    with running_app([web.post("/{mode}", handle)], "http-agent") as url:
        yield url, seen


def ask_http(url: str, mode: str, path: str | None, timeout_ms: int = 5000, **extra: Any) -> Reply:
    config = HttpAgent.model_validate(
        {
            "type": "http",
            "endpoint": f"{url}/{mode}",
            "response_path": path,
            "request_template": {"input": {"text": "{prompt}", "n": 1}},
            "timeout_ms": timeout_ms,
            **extra,
        }
    )

    async def go() -> Reply:
        adapter = HttpAdapter(config)
        await adapter.start()
        try:
            return await adapter.invoke(PROMPT)
        finally:
            await adapter.close()

    return asyncio.run(go())


def test_http_template_is_json_safe_and_error_null_is_not_an_error() -> None:
    with http_agent() as (url, seen):
        reply = ask_http(url, "json", "$.reply")
    assert seen == [{"input": {"text": PROMPT, "n": 1}}]
    assert reply == Reply(PROMPT, reply.latency_ms, None)


@pytest.mark.parametrize(
    ("mode", "path", "text"),
    [("nested", "$.data.answers[1].text", "deep"), ("sse", "$.delta", "Hello there!"), ("ndjson", "$.delta", "abc")],
)
def test_http_answers_are_found_and_assembled(mode: str, path: str, text: str) -> None:
    with http_agent() as (url, _):
        assert ask_http(url, mode, path).text == text


def test_http_errors_are_agent_errors_with_a_reason() -> None:
    with http_agent() as (url, _):
        null = ask_http(url, "null", "$.reply")  # not the text "null", which completes and output_not_empty PASSed
        assert null.text is None
        assert (
            null.error
            == 'response_path $.reply holds null in the agent\'s answer: {"reply": null, "error": "no quote"}'
        )
        assert ask_http(url, "fail", "$.reply").error == 'agent answered HTTP 503: {"error": "boom"}'
        missing = ask_http(url, "json", "$.answer")
        assert missing.text is None and "response_path $.answer not found (at 'answer')" in (missing.error or "")
        slow = ask_http(url, "slow", "$.reply", timeout_ms=200)
        assert slow.error == "agent timed out after 200 ms"


@pytest.mark.parametrize(
    ("mode", "path", "at", "holds", "keys"),
    [
        ("json", "$.replly", "$", "object", ["reply", "error"]),
        ("nested", "$.data.answer.text", "$.data", "object", ["answers"]),
        ("nested", "$.data.answers[2].text", "$.data.answers", "array", []),
        ("json", "$.reply.text", "$.reply", "string", []),
    ],
)
def test_http_says_where_a_response_path_stopped_and_what_the_body_held(
    mode: str, path: str, at: str, holds: str, keys: list[str]
) -> None:
    """What tells a wrong response_path (flakeproxy.judging.calm_checks names the keys the bodies had)."""
    with http_agent() as (url, _):
        reply = ask_http(url, mode, path)
    assert reply.text is None and reply.unread is not None and "not found" in (reply.error or "")
    assert (reply.unread.at, reply.unread.holds, reply.unread.keys) == (at, holds, keys)


def test_http_unreachable_agent_is_infrastructure() -> None:
    with pytest.raises(InfrastructureError, match="unreachable"):
        ask_http(f"http://127.0.0.1:{free_port()}", "json", "$.reply")


def test_an_https_url_to_a_plain_http_agent_says_its_handshake_failed() -> None:
    """Not "unreachable: Operation not permitted" (a TLS error's errno, 1, read as the system's)."""
    with http_agent() as (url, _), pytest.raises(InfrastructureError) as raised:
        ask_http(url.replace("http:", "https:"), "json", "$.reply")
    assert str(raised.value) == (
        f"agent {url.replace('http:', 'https:')}/json: the TLS handshake failed ([SSL: WRONG_VERSION_NUMBER] wrong "
        "version number); if it serves plain HTTP, use an http:// URL"
    )


def run_command(command: list[str], timeout_ms: int = 5000) -> Reply:
    adapter = CommandAdapter(
        CommandAgent.model_validate({"type": "command", "command": command, "timeout_ms": timeout_ms})
    )
    return asyncio.run(adapter.invoke(PROMPT))


def test_command_prompt_on_stdin_or_in_an_argument() -> None:
    echo = "import sys; print(sys.stdin.read().upper())"
    assert run_command([sys.executable, "-c", echo]).text == PROMPT.upper()
    assert run_command([sys.executable, "-c", "import sys; print(sys.argv[1][::-1])", "{prompt}"]).text == PROMPT[::-1]


def test_command_nonzero_exit_is_an_agent_error() -> None:
    reply = run_command([sys.executable, "-c", "import sys; sys.stderr.write('no key'); sys.exit(4)"])
    assert reply.text is None and reply.error == "agent command exited 4: no key"


def test_command_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time; "
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(pidfile)!r}, 'w').write(str(p.pid)); time.sleep(60)"
    )
    start = time.monotonic()
    reply = run_command([sys.executable, "-c", script], timeout_ms=1500)
    assert time.monotonic() - start < 10
    assert reply.error == "agent command timed out after 1500 ms (process group killed)"
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"the agent's own child {grandchild} is still alive")
