"""Running a long command: SIGTERM (CI cancellation, docker stop) and Ctrl-C stop it with the results written."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import click

T = TypeVar("T")


def run_until_signal(start: Callable[[], Awaitable[T]], out: Path) -> T:
    """Run start() to completion; on SIGTERM or SIGINT cancel it (it writes its results as it stops), say
    where the results are in one line, and exit 143 or 130."""
    stopped_by: list[str] = []

    async def main() -> T:
        task, loop = asyncio.current_task(), asyncio.get_running_loop()
        assert task is not None

        def stop(name: str) -> None:
            stopped_by.append(name)
            task.cancel()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop, sig.name)
        try:
            return await start()
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)

    try:
        return asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        name = stopped_by[0] if stopped_by else "SIGINT"
        click.echo(f"error: interrupted by {name}; the results so far are in {out / 'results.json'}", err=True)
        raise SystemExit(143 if name == "SIGTERM" else 130) from None
