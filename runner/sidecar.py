"""What the runner checks of, asks of and says about the proxy it drives, most of all a sidecar someone else started
and others use: that it matches requests to the same targets as this config (a difference is refused, in one line);
that the episodes a run opened there end however the run stops (ended by the runner, or by the sidecar itself once
their lease ran out when the runner was killed); and which config key (and variable) a refused token comes from.

The scenarios themselves need no check: the runner sends each episode's scenario whole (runner/episodes.py), so the
proxy runs the faults this run judges whatever its own chaos_matrix holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flakeproxy import control_api as api
from flakeproxy.config import FlakeproxyConfig
from flakeproxy.config.proxy import target_specs
from flakeproxy.config.reading import MAX_CONFIG_BYTES, read_text
from flakeproxy.config.yamlsource import parse_yaml, variables_in
from flakeproxy.errors import ConfigError, FlakeproxyError
from flakeproxy.runner.control import ControlClient

#: A sidecar's episode lease: the agent's timeout plus this, for what runs between two control calls on an episode
#: besides the agent (the mock services' resets, the runner's own work under load).
LEASE_MARGIN_MS = 30_000


def _shown(value: str | None) -> str:
    return "unset" if value is None else repr(value)


def targets_difference(own: dict[str, dict[str, Any]], theirs: dict[str, dict[str, Any]]) -> str | None:
    """The first difference between this config's targets and the proxy's, in words (None: they agree): a target
    one side lacks, or the first field (listener, path, method, mcp_tool, api, host) they set otherwise."""
    for name, mine in own.items():
        if name not in theirs:
            return f"target {name!r} is in this config, not in the proxy's targets"
        for key, value in mine.items():
            other = theirs[name].get(key)
            if other != value:
                return f"target {name!r}: {key} is {_shown(value)} here, {_shown(other)} in the proxy's config"
    extra = [name for name in theirs if name not in own]
    if extra:
        return f"target {extra[0]!r} is in the proxy's config, not in this one's targets"
    return None


def check_targets(config: FlakeproxyConfig, config_path: str, health: dict[str, Any], url: str) -> str | None:
    """Refuse (ConfigError, one line) a proxy that matches requests to other targets than this config's: its
    targets decide which requests the faults hit and which are LLM calls whose usage is read, so the run would judge
    something else than what it says. A warning line instead when the proxy does not say (a version before this
    check); None when they agree."""
    theirs = api.Health.model_validate(health).targets
    if theirs is None:
        return (
            f"warning: the proxy at {url} does not report its targets (flakeproxy {health.get('version', '?')}), "
            "so this run cannot check that they are this config's; run the same flakeproxy version there"
        )
    own = {name: dataclasses.asdict(spec) for name, spec in target_specs(config.targets).items()}
    difference = targets_difference(own, theirs)
    if difference is None:
        return None
    raise ConfigError(
        f"{config_path}: the proxy at {url} matches requests to other targets than this config: {difference}; "
        f"start the proxy with this config's targets, or copy the proxy's targets into {config_path}"
    )


def token_hint(config_path: str) -> str:
    """What sets the token the runner sends: `proxy.token in FILE` and, when the file writes it as ${VAR}, that
    variable (the only one that changes it: the runner reads no FLAKEPROXY_TOKEN)."""
    where = f"proxy.token in {config_path}"
    try:
        data = parse_yaml(read_text(Path(config_path), "config", MAX_CONFIG_BYTES), config_path).data
    except (FlakeproxyError, OSError):
        return where
    proxy = data.get("proxy") if isinstance(data, dict) else None
    written = proxy.get("token") if isinstance(proxy, dict) else None
    names = variables_in(written) if isinstance(written, str) else []
    if names:
        return f"{where} (it reads {', '.join(f'${{{n}}}' for n in names)})"
    return where


def lease_ms(config: FlakeproxyConfig) -> int:
    """How long a sidecar keeps an episode of this run open with no call on it: longer than an agent invocation may
    take (agent.timeout_ms, per turn) plus a margin, so only a runner that is gone (killed) loses one."""
    assert config.agent is not None
    return config.agent.timeout_ms + LEASE_MARGIN_MS


async def release(control: ControlClient, warn: Callable[[str], None]) -> None:
    """End the episodes the run left open on the sidecar (a run stopped mid-episode: Ctrl-C, SIGTERM, a budget stop,
    a crash), or the next requests through it, anyone's, would land in them and get their faults. Best effort and
    bounded; it raises nothing of its own, so whatever stopped the run is what the run reports."""
    left = await control.release()
    if left:
        warn(
            f"warning: episode(s) {', '.join(left)} could not be ended on the proxy at {control.url}; until they are, "
            "requests through it may get their faults: end them, or POST /reset to its control API"
        )
