"""`flakeproxy mock`: serve the config's http_mock services (recording), e.g. beside a staging agent."""

from __future__ import annotations

import asyncio
import signal

import click

from flakeproxy.cli.options import config_option
from flakeproxy.config import load_config
from flakeproxy.config.settings import HttpMockService
from flakeproxy.errors import ConfigError
from flakeproxy.proxycore.redact import Redactor


@click.command()
@config_option
@click.option("--service", "names", multiple=True, help="Serve only this service (repeatable; default: all).")
def mock(config_path: str, names: tuple[str, ...]) -> None:
    """Serve the http_mock services of the config: canned answers from their routes, every request recorded
    (GET /_flakeproxy/requests, POST /_flakeproxy/reset). One line when ready; stops on SIGTERM / Ctrl-C."""
    from flakeproxy.runner.mock import MockService

    config = load_config(config_path)
    mocks = {n: s for n, s in config.services.items() if isinstance(s, HttpMockService)}
    unknown = [n for n in names if n not in mocks]
    if unknown or not mocks:
        raise ConfigError(
            f"{config_path}: services: no http_mock service {unknown or ''}; valid: {', '.join(mocks) or '(none)'}"
        )

    async def serve() -> None:
        running = [MockService(n, s, Redactor(config.redact)) for n, s in mocks.items() if not names or n in names]
        for m in running:
            await m.start()
        click.echo("flakeproxy mock ready: " + ", ".join(f"{m.name} http://{m.config.listen}" for m in running))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        for m in running:
            await m.stop()

    asyncio.run(serve())
