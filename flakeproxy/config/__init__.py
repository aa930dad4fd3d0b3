"""The flakeproxy.yaml model (version "2.0") and its loader.

The names are imported when first used (PEP 562 `__getattr__`), not here: importing a leaf such as
flakeproxy.config.base (the faults' and invariants' shared types) runs this package first, and importing the
whole model from here would import the faults back while they are half made (an import circle,
tests/test_architecture.py holds it open).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flakeproxy.lazy import lazy_names

if TYPE_CHECKING:
    from flakeproxy.config.agent import Agent, CommandAgent, HttpAgent, PythonAgent, parse_response_path
    from flakeproxy.config.contract import Contract
    from flakeproxy.config.loader import load_config, parse_config
    from flakeproxy.config.model import FlakeproxyConfig
    from flakeproxy.config.proxy import Listener, ProxyConfig, Target, is_loopback_host
    from flakeproxy.config.scenario import Scenario
    from flakeproxy.config.settings import RunConfig, ScoringConfig, ScoringWeights
    from flakeproxy.config.wire_config import WireConfig

_LAZY = {
    "Agent": "flakeproxy.config.agent",
    "CommandAgent": "flakeproxy.config.agent",
    "HttpAgent": "flakeproxy.config.agent",
    "PythonAgent": "flakeproxy.config.agent",
    "parse_response_path": "flakeproxy.config.agent",
    "Contract": "flakeproxy.config.contract",
    "load_config": "flakeproxy.config.loader",
    "parse_config": "flakeproxy.config.loader",
    "FlakeproxyConfig": "flakeproxy.config.model",
    "Listener": "flakeproxy.config.proxy",
    "ProxyConfig": "flakeproxy.config.proxy",
    "Target": "flakeproxy.config.proxy",
    "is_loopback_host": "flakeproxy.config.proxy",
    "Scenario": "flakeproxy.config.scenario",
    "RunConfig": "flakeproxy.config.settings",
    "ScoringConfig": "flakeproxy.config.settings",
    "ScoringWeights": "flakeproxy.config.settings",
    "WireConfig": "flakeproxy.config.wire_config",
}

__all__ = [
    "Agent",
    "CommandAgent",
    "Contract",
    "FlakeproxyConfig",
    "HttpAgent",
    "Listener",
    "ProxyConfig",
    "PythonAgent",
    "RunConfig",
    "Scenario",
    "ScoringConfig",
    "ScoringWeights",
    "Target",
    "WireConfig",
    "is_loopback_host",
    "load_config",
    "parse_config",
    "parse_response_path",
]


__getattr__ = lazy_names(__name__, _LAZY, globals())
