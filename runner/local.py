"""Start `flakeproxy proxy` as a child process for a local run, and notice if it dies."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys

from flakeproxy.errors import InfrastructureError


class LocalProxy:
    def __init__(self, config_path: str) -> None:
        self.config_path = config_path
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "flakeproxy",
            "proxy",
            "-c",
            self.config_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        try:
            line = await asyncio.wait_for(self.process.stdout.readline(), 30)
        except TimeoutError:
            line = b""
        if not line.startswith(b"flakeproxy proxy ready"):
            err = b""
            if self.process.stderr is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    err = await asyncio.wait_for(self.process.stderr.read(), 5)
            await self.stop()
            message = err.decode(errors="replace").strip().removeprefix("error: ") or "no ready line in 30 s"
            raise InfrastructureError(f"the proxy did not start: {message}")

    def check_alive(self) -> None:
        if self.process is not None and self.process.returncode is not None:
            raise InfrastructureError(f"the proxy process died (exit {self.process.returncode}) during the run")

    async def stop(self) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            await self.process.wait()
