"""results.json: a new result for a config, and writing it atomically."""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import platform
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.errors import ConfigError
from flakeproxy.results import RunResult
from flakeproxy.safe_text import utf8_json
from flakeproxy.version import __version__


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("mitmproxy", "aiohttp", "pydantic"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    return out


def new_result(config: FlakeproxyConfig, config_path: str) -> RunResult:
    return RunResult(
        flakeproxy_version=__version__,
        versions=versions(),
        config_path=config_path,
        config_sha256=hashlib.sha256(Path(config_path).read_bytes()).hexdigest(),
        contract=config.contract.name if config.contract else None,
        seed=config.run.seed,
        isolation=config.run.isolation,
        started_at=now(),
        scenarios=[s.name for s in config.matrix],
        invariants=[i.id for i in config.contract.invariants] if config.contract else [],
    )


def write(result: RunResult, output: Path | None) -> None:
    """Write output/results.json through a temporary file, so a reader never sees half of it; whatever the agent
    answered (lone surrogates are written escaped)."""
    if output is None:
        return
    with _said(output):
        output.mkdir(parents=True, exist_ok=True)
        tmp = output / "results.json.tmp"
        tmp.write_bytes(utf8_json(result.model_dump(mode="json"), indent=2))
        tmp.replace(output / "results.json")


def check_writable(output: Path | None) -> None:
    """Fail now, in one line, when results.json could not be written to output (before the run starts)."""
    if output is None:
        return
    with _said(output):
        output.mkdir(parents=True, exist_ok=True)
        probe = output / "results.json.tmp"
        probe.write_text("")
        probe.unlink()


@contextlib.contextmanager
def _said(output: Path) -> Iterator[None]:
    try:
        yield
    except OSError as e:
        raise ConfigError(
            f"cannot write {output / 'results.json'} ({e.strerror or e}); point run.output or -o at a folder "
            "this user can write"
        ) from e
