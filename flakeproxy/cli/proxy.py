"""`flakeproxy proxy`: run the fault-injecting proxy (locally, or as a sidecar)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from flakeproxy.cli.main import end_at_once, started
from flakeproxy.cli.options import config_option, record_option

if TYPE_CHECKING:
    from flakeproxy.config import WireConfig

#: In a child the runner forked to hand its validated config to (runner/forked.py): the pipe it comes on.
handed_fd: int | None = None


@click.command()
@config_option
@click.option(
    "--admin",
    metavar="HOST:PORT",
    envvar="FLAKEPROXY_ADMIN",
    help="Where the control API listens (default: proxy.admin; env: FLAKEPROXY_ADMIN).",
)
@click.option(
    "--token",
    envvar="FLAKEPROXY_TOKEN",
    help="Require this bearer token on the control API (default: proxy.token; env: FLAKEPROXY_TOKEN).",
)
@record_option(
    "Record every exchange, whole, into one replay session file per cell in DIR (written when the cell "
    "ends; traffic of no cell at shutdown)."
)
def proxy(config_path: str, admin: str | None, token: str | None, record: Path | None) -> None:
    """Run the proxy: a reverse listener per proxy.listeners entry, and the control API.

    It starts with no scenario (pure pass-through), prints one line when ready, and stops
    cleanly on SIGTERM or Ctrl-C. Switch scenarios with PUT /scenario on the control API.
    """
    # The proxy's config models need no pydantic plugin (logfire's, say), and looking for them read every installed
    # package's entry points when the first model was built: 15 ms of each start (issue 23). Set before the models
    # are imported; this process runs no code of the user's (a python agent runs in the runner's).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if handed_fd is None:
        config = _load(config_path)  # a config error is said before mitmproxy's imports
        from flakeproxy.addons.server import ProxyServer  # the only command that needs mitmproxy
    else:  # mitmproxy's imports first: meanwhile, the runner validates the config it hands over
        from flakeproxy.addons.server import ProxyServer

        config = _handed(handed_fd) or _load(config_path)

    def ready(line: str) -> None:
        started()
        click.echo(line)
        sys.stdout.flush()

    server = ProxyServer(config, admin=admin, token=token, record=record)
    asyncio.run(server.run(on_ready=ready))
    end_at_once()  # stopped, its files written and closed


def _load(config_path: str) -> WireConfig:
    from flakeproxy.config import WireConfig, load_config

    return load_config(config_path, model=WireConfig)  # the invariants are the runner's to validate


def _handed(fd: int) -> WireConfig | None:
    """The config the runner handed over (runner/forked.py ForkedChild.hand), or None if it handed none."""
    import pickle

    with os.fdopen(fd, "rb") as pipe:
        data = pipe.read()
    config: WireConfig | None = pickle.loads(data) if data else None  # written by the runner's own process image
    return config
