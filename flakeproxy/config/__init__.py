"""The flakeproxy.yaml model (version "2.0") and its loader."""

from flakeproxy.config.agent import Agent, CommandAgent, HttpAgent, PythonAgent, parse_response_path
from flakeproxy.config.contract import Contract
from flakeproxy.config.loader import load_config, parse_config
from flakeproxy.config.model import FlakeproxyConfig
from flakeproxy.config.proxy import Listener, ProxyConfig, Target, is_loopback_host
from flakeproxy.config.scenario import Scenario
from flakeproxy.config.settings import RunConfig, ScoringConfig, ScoringWeights

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
    "is_loopback_host",
    "load_config",
    "parse_config",
    "parse_response_path",
]
