"""Agent adapters: one invocation in, an answer (or an agent error) out."""

from __future__ import annotations

from flakeproxy.config.agent import Agent as AgentConfig
from flakeproxy.config.agent import CommandAgent, HttpAgent
from flakeproxy.runner.agents.base import Agent, Reply
from flakeproxy.runner.agents.command import CommandAdapter
from flakeproxy.runner.agents.http import HttpAdapter
from flakeproxy.runner.agents.python import PythonAdapter


def make_agent(config: AgentConfig) -> Agent:
    if isinstance(config, HttpAgent):
        return HttpAdapter(config)
    if isinstance(config, CommandAgent):
        return CommandAdapter(config)
    return PythonAdapter(config)


__all__ = ["Agent", "Reply", "make_agent"]
