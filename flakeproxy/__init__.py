"""flakeproxy: does your agent keep its rules when its LLM, tool and MCP calls break?"""

from flakeproxy.config import FlakeproxyConfig, load_config, parse_config
from flakeproxy.errors import ConfigError, FlakeproxyError, InfrastructureError
from flakeproxy.schema import config_schema

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "FlakeproxyConfig",
    "FlakeproxyError",
    "InfrastructureError",
    "__version__",
    "config_schema",
    "load_config",
    "parse_config",
]
