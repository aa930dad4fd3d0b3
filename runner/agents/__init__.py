"""Agent adapters: one invocation in, an answer (or an agent error) out.

The registry: each kind of agent is one config model (flakeproxy/config/agent.py) and one adapter module here,
tied together by register_adapter. Nothing else in the runner asks which kind of agent it has: what differs
between them is in the adapter (its reset, its ports).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from flakeproxy.config.agent import AgentBase, CommandAgent, HttpAgent, PythonAgent
from flakeproxy.errors import ConfigError
from flakeproxy.runner.agents.base import Agent, Reply
from flakeproxy.runner.agents.command import CommandAdapter
from flakeproxy.runner.agents.http import HttpAdapter
from flakeproxy.runner.agents.python import PythonAdapter

C = TypeVar("C", bound=AgentBase)

#: Makes the adapter for a config of its type; `near` is the config file's folder (for imports it names).
AdapterFactory = Callable[[AgentBase, Path | None], Agent]
ADAPTERS: dict[type[AgentBase], AdapterFactory] = {}


def register_adapter(config_type: type[AgentBase], factory: AdapterFactory) -> None:
    """Make agents of config_type with factory (a second registration of a type replaces the first)."""
    ADAPTERS[config_type] = factory


def make_agent(config: AgentBase, near: Path | None = None) -> Agent:
    factory = ADAPTERS.get(type(config))
    if factory is None:
        known = ", ".join(sorted(t.__name__ for t in ADAPTERS))
        raise ConfigError(f"no adapter is registered for agent config {type(config).__name__}; known: {known}")
    return factory(config, near)


def register_typed(config_type: type[C], make: Callable[[C, Path | None], Agent]) -> None:
    """register_adapter for a factory that takes the config as its own type."""

    def factory(config: AgentBase, near: Path | None) -> Agent:
        assert isinstance(config, config_type)  # the registry keys the factory by this very type
        return make(config, near)

    register_adapter(config_type, factory)


register_typed(HttpAgent, lambda config, near: HttpAdapter(config))
register_typed(CommandAgent, lambda config, near: CommandAdapter(config))
register_typed(PythonAgent, PythonAdapter)

__all__ = ["ADAPTERS", "AdapterFactory", "Agent", "Reply", "make_agent", "register_adapter", "register_typed"]
