"""What a run's command line may override in the config (--seed, --concurrency, --replicas), checked as the config
is: the same model and the same checks across sections, each problem one line naming the option and the fix."""

from __future__ import annotations

import re

from pydantic import ValidationError

from flakeproxy.config.crosscheck import CrossCheckError
from flakeproxy.config.model import FlakeproxyConfig
from flakeproxy.config.settings import RunConfig
from flakeproxy.config.wire_config import check_k, check_min_pass_rate_read
from flakeproxy.errors import ConfigError

_ADAPTIVE = re.compile(r"^\s*(\d+)\s*:\s*(\d+)\s*$")


def parse_replicas(text: str) -> int | dict[str, int]:
    """--replicas N (fixed) or MIN:MAX (adaptive, as run.replicas: {min, max}); anything else is one line."""
    if text.strip().isdigit():
        return int(text)
    found = _ADAPTIVE.match(text)
    if found is None:
        raise ConfigError(f"--replicas {text!r}: give a number (e.g. 5) or MIN:MAX for adaptive replicas (e.g. 2:30)")
    return {"min": int(found[1]), "max": int(found[2])}


def with_overrides(
    config: FlakeproxyConfig, seed: int | None = None, concurrency: int | None = None, replicas: str | None = None
) -> FlakeproxyConfig:
    """The config with the command line's run options in place of run.seed, run.concurrency and run.replicas.
    --replicas goes through run.replicas' own model and the checks that read it (scoring.k, min_pass_rate), so a
    value the config could not hold is refused the same way, naming --replicas."""
    updates: dict[str, object] = {k: v for k, v in (("seed", seed), ("concurrency", concurrency)) if v is not None}
    if replicas is not None:
        try:
            checked = RunConfig.model_validate({**config.run.model_dump(), "replicas": parse_replicas(replicas)})
        except ValidationError as e:
            why = e.errors()[0]["msg"].removeprefix("Value error, ")
            raise ConfigError(f"--replicas {replicas}: {why}") from None
        updates["replicas"] = checked.replicas
    if not updates:
        return config
    run = config.run.model_copy(update=updates)
    try:  # the cross-section checks that read run.replicas, as loading the config runs them
        check_k(run, config.scoring)
        check_min_pass_rate_read(run, config.scoring)
    except CrossCheckError as e:
        raise ConfigError(f"--replicas {replicas}: {e.message}") from None
    return config.model_copy(update={"run": run})
