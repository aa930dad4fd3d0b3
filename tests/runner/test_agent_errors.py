"""An agent's error is one line that says what went wrong, whatever the agent printed."""

from __future__ import annotations

import asyncio
import sys

import pytest

from flakeproxy.config.agent import CommandAgent
from flakeproxy.runner.agents.base import clip, telling_line
from flakeproxy.runner.agents.command import CommandAdapter

NODE_STACK = """file:///tmp/agent/node_modules/openai/error.mjs:62
            return new InternalServerError(status, error, message, headers);
                   ^

InternalServerError: 500 Internal server error
    at APIError.generate (file:///tmp/agent/node_modules/openai/error.mjs:62:20)

Node.js v20.11.0
"""
PY_TRACEBACK = """Traceback (most recent call last):
  File "agent.py", line 3, in <module>
    raise RuntimeError("the LLM answered 500")
RuntimeError: the LLM answered 500
"""


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (NODE_STACK, "InternalServerError: 500 Internal server error"),
        ("error: connection refused (os error 111)\n", "error: connection refused (os error 111)"),
        (PY_TRACEBACK, "RuntimeError: the LLM answered 500"),
        ("500 Internal Server Error\n\nServer got itself in trouble\n", "Server got itself in trouble"),
        ("", ""),
    ],
)
def test_the_telling_line(text: str, line: str) -> None:
    assert telling_line(text) == line


def test_clip_is_one_line() -> None:
    assert clip("500 Internal Server Error\n\nServer got itself\tin trouble") == (
        "500 Internal Server Error Server got itself in trouble"
    )
    assert clip("x" * 400, 10) == "x" * 10 + "..."


def test_a_failing_command_agent_reports_its_exception_in_one_line() -> None:
    agent = CommandAdapter(
        CommandAgent(type="command", command=[sys.executable, "-c", "raise RuntimeError('the LLM answered 500')"])
    )
    reply = asyncio.run(agent.invoke("hi"))
    assert reply.error == "agent command exited 1: RuntimeError: the LLM answered 500"
