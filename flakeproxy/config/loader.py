"""load_config: read, parse, expand ${VAR}, validate; every problem is a one-line ConfigError."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, overload

from pydantic import ValidationError

from flakeproxy.config.problems import explain
from flakeproxy.config.reading import MAX_CONFIG_BYTES, read_text
from flakeproxy.config.wire_config import WireConfig
from flakeproxy.config.yamlsource import expand_env, parse_yaml
from flakeproxy.errors import ConfigError

if TYPE_CHECKING:
    from flakeproxy.config.model import FlakeproxyConfig

#: The model a config is validated as: FlakeproxyConfig, or the proxy's WireConfig (no invariant catalogue).
M = TypeVar("M", bound=WireConfig)

#: What -c defaults to, in the working directory.
DEFAULT_CONFIG = "flakeproxy.yaml"


@overload
def load_config(path: str | os.PathLike[str], environ: dict[str, str] | None = None) -> FlakeproxyConfig: ...
@overload
def load_config(path: str | os.PathLike[str], environ: dict[str, str] | None = None, *, model: type[M]) -> M: ...
def load_config(
    path: str | os.PathLike[str], environ: dict[str, str] | None = None, *, model: type[WireConfig] | None = None
) -> WireConfig:
    """Load and validate a flakeproxy.yaml (as FlakeproxyConfig unless told which model); raise ConfigError
    naming file, line, key path and fix."""
    name = str(path)
    if not Path(path).exists():
        raise ConfigError(missing_config(name))
    text = read_text(Path(path), "config", MAX_CONFIG_BYTES)  # a regular file, bounded: refused at once if huge
    return parse_config(text, name, environ, model=model or _full_model())


def missing_config(name: str) -> str:
    """The one line for a config that is not there: how to make one (`flakeproxy init`) or point at another."""
    if name == DEFAULT_CONFIG:
        return f"no {DEFAULT_CONFIG} here: create one with `flakeproxy init`, or pass -c FILE"
    return f"{name}: file not found; check the path, or create it with `flakeproxy init -c {name}`"


@overload
def parse_config(text: str, name: str = "<string>", environ: dict[str, str] | None = None) -> FlakeproxyConfig: ...
@overload
def parse_config(text: str, name: str = "<string>", environ: dict[str, str] | None = None, *, model: type[M]) -> M: ...
def parse_config(
    text: str, name: str = "<string>", environ: dict[str, str] | None = None, *, model: type[WireConfig] | None = None
) -> WireConfig:
    """Validate config text (what load_config does after reading the file)."""
    source = parse_yaml(text, name)
    if not isinstance(source.data, dict):
        got = "an empty file" if source.data is None else f"a {type(source.data).__name__}"
        raise ConfigError(f'{name} line 1: the config must be a mapping starting with version: "2.0", got {got}')
    if "version" in source.data and source.data["version"] != "2.0":
        raise ConfigError(
            f'{name} line {source.line_of(("version",))}: version: must be "2.0" (quoted), '
            f"got {source.data['version']!r}"
        )
    data = expand_env(source, environ)
    root = model or _full_model()
    try:
        return root.model_validate(data)
    except ValidationError as e:
        raise ConfigError(explain(e, source, root)) from e


def _full_model() -> type[WireConfig]:
    """FlakeproxyConfig, imported when first asked for: it imports the invariant catalogue, which the proxy,
    validating a WireConfig, never does."""
    from flakeproxy.config.model import FlakeproxyConfig

    return FlakeproxyConfig
