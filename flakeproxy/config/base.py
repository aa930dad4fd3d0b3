"""The one base model: frozen, unknown keys rejected, and shared field types."""

from __future__ import annotations

import fnmatch
import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


class StrictModel(BaseModel):
    """Every config model: validated once at load, immutable afterwards, no unknown keys.

    `defer_build`: a model's validator is built when it is first used, not when its class is made. Eagerly, every
    nested model (each fault, each invariant) was compiled once alone and again inside each model that holds it,
    and models a process never validates were compiled too: the proxy's config cost 160 ms of CPU to import,
    85 ms so (issue 23).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False, defer_build=True)


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as e:
        raise ValueError(f"regular expression does not compile ({e})") from e
    return pattern


def _host_port(value: str) -> str:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError("must be HOST:PORT with a port from 0 to 65535, e.g. 127.0.0.1:8701")
    return value


def _import_path(value: str) -> str:
    module, sep, attr = value.partition(":")
    if not sep or not module or not attr:
        raise ValueError("must be MODULE:ATTRIBUTE, e.g. myagent:reset_state")
    return value


def _http_url(value: str) -> str:
    if not re.match(r"^https?://[^/\s]+", value):
        raise ValueError("must be an http:// or https:// URL, e.g. http://127.0.0.1:8000/chat")
    return value


Regex = Annotated[str, AfterValidator(_compiles)]
HostPort = Annotated[str, AfterValidator(_host_port)]
ImportPath = Annotated[str, AfterValidator(_import_path)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]
Milliseconds = Annotated[int, Field(ge=0)]
Probability = Annotated[float, Field(ge=0.0, le=1.0)]


def is_glob(name: str) -> bool:
    """True when a name is a glob pattern rather than a literal name."""
    return any(ch in name for ch in "*?[")


def glob_matches(pattern: str, names: list[str]) -> list[str]:
    """The names a glob (or literal name) selects, in their given order."""
    return [n for n in names if fnmatch.fnmatchcase(n, pattern)]
