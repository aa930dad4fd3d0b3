"""flakeproxy: does your agent keep its rules when its LLM, tool and MCP calls break?

The package's names are imported when first used (PEP 562 `__getattr__`), not here: `import flakeproxy`, which
every submodule import runs first, would otherwise pull in the whole config layer (pydantic models, the
invariant catalogue, jsonschema), most of the proxy's start-up time. tests/test_imports.py holds it to that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flakeproxy.lazy import lazy_names

if TYPE_CHECKING:
    from flakeproxy.config import FlakeproxyConfig, load_config, parse_config
    from flakeproxy.errors import ConfigError, FlakeproxyError, InfrastructureError
    from flakeproxy.results import RunResult
    from flakeproxy.schema import config_schema
    from flakeproxy.wire.call import CELL_HEADER, current_cell, listener_url
    from flakeproxy.wire.trace import trace_headers

from flakeproxy.version import __version__

#: public name -> the module it comes from
_LAZY = {
    "FlakeproxyConfig": "flakeproxy.config",
    "load_config": "flakeproxy.config",
    "parse_config": "flakeproxy.config",
    "ConfigError": "flakeproxy.errors",
    "FlakeproxyError": "flakeproxy.errors",
    "InfrastructureError": "flakeproxy.errors",
    "RunResult": "flakeproxy.results",
    "config_schema": "flakeproxy.schema",
    "CELL_HEADER": "flakeproxy.wire.call",
    "current_cell": "flakeproxy.wire.call",
    "listener_url": "flakeproxy.wire.call",
    "trace_headers": "flakeproxy.wire.trace",
}


__getattr__ = lazy_names(__name__, _LAZY, globals())


def run_contract(config_path: str, output: str | None = None) -> RunResult:
    """Python equivalent of `flakeproxy contract run`: every cell, scored; results.json in output
    (default run.output). Raises ConfigError / InfrastructureError as the CLI exits 2 / 3."""
    from flakeproxy.runner.engine import run_contract as run

    result: RunResult = run(config_path, output)
    return result


def run_ci(config_path: str, output: str | None = None, min_score: float | None = None) -> RunResult:
    """Python equivalent of `flakeproxy ci`: every configured pillar once and the overall score
    (result.ci); results.json in output (default run.output)."""
    import asyncio
    from pathlib import Path

    from flakeproxy.config import load_config
    from flakeproxy.runner.ci import run_ci_async

    config = load_config(config_path)
    out = Path(output or config.run.output)
    result: RunResult = asyncio.run(run_ci_async(config, config_path, out, min_overall=min_score))
    return result


__all__ = [
    "CELL_HEADER",
    "ConfigError",
    "FlakeproxyConfig",
    "FlakeproxyError",
    "InfrastructureError",
    "RunResult",
    "__version__",
    "config_schema",
    "current_cell",
    "listener_url",
    "load_config",
    "parse_config",
    "run_ci",
    "run_contract",
    "trace_headers",
]
