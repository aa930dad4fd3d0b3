"""flakeproxy: does your agent keep its rules when its LLM, tool and MCP calls break?"""

from flakeproxy.config import FlakeproxyConfig, load_config, parse_config
from flakeproxy.errors import ConfigError, FlakeproxyError, InfrastructureError
from flakeproxy.results import RunResult
from flakeproxy.schema import config_schema

__version__ = "0.1.0"


def run_contract(config_path: str, output: str | None = None) -> RunResult:
    """Python equivalent of `flakeproxy contract run`: every cell, scored; results.json in output
    (default run.output). Raises ConfigError / InfrastructureError as the CLI exits 2 / 3."""
    from flakeproxy.runner.engine import run_contract as run

    result: RunResult = run(config_path, output)
    return result


__all__ = [
    "ConfigError",
    "FlakeproxyConfig",
    "FlakeproxyError",
    "InfrastructureError",
    "RunResult",
    "__version__",
    "config_schema",
    "load_config",
    "parse_config",
    "run_contract",
]
