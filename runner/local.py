"""Start `flakeproxy proxy` as a child process for a local run, and notice if it dies.

The child must import the very flakeproxy package this runner runs from. `python -m flakeproxy` would put
the working directory first on sys.path, and from a clone's root the source folder `flakeproxy/` (which
lacks addons/ and runner/, mapped under it only at install) would shadow the installed package. So the
child runs with `-P` (no working directory or script folder on sys.path) and checks, before anything
else, that the package it found is ours; otherwise it says which two it saw and exits.

With FLAKEPROXY_IN_PROCESS_PROXY=1 (the test suite sets it) the same proxy, the one `flakeproxy proxy` runs (the
config's listeners, flakeproxy's addons on mitmproxy's master, real sockets), runs in a thread of this process
with its own event loop instead: it spares each run the child's 2 s of imports. What the child alone does (end
with the runner, die apart from it) is then not exercised, so the tests of that run without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

import flakeproxy.version
from flakeproxy.errors import FlakeproxyError, InfrastructureError

if TYPE_CHECKING:
    from flakeproxy.addons.server import ProxyServer

IN_PROCESS = "FLAKEPROXY_IN_PROCESS_PROXY"


def in_process() -> bool:
    """The test suite's switch: the proxy runs in a thread of this process instead of as the child."""
    return os.environ.get(IN_PROCESS) == "1"


if TYPE_CHECKING:
    from flakeproxy.config import FlakeproxyConfig

# Run as `python -P -c CHILD <our package folder> <runner pid> proxy -c CONFIG`. It ends when the runner dies, by
# any signal (it runs in a session of its own, so the runner's process group signals do not reach it).
CHILD = (
    "import os, sys\n"
    "import flakeproxy\n"
    "want, found = sys.argv[1], os.path.dirname(os.path.realpath(flakeproxy.__file__))\n"
    "if found != want:\n"
    "    sys.exit(f'error: the proxy would import flakeproxy from {found}, not from {want} where this run'\n"
    "             ' started; unset PYTHONPATH or reinstall flakeproxy into this environment')\n"
    "from flakeproxy.runner.parent_watch import end_with_parent\n"
    "end_with_parent(int(sys.argv[2]))\n"
    "from flakeproxy.cli.main import main\n"
    "main(sys.argv[3:])\n"
)


def proxy_command(config_path: str) -> list[str]:
    """The child's command line: this interpreter, isolated from the working directory, our package."""
    package = str(Path(flakeproxy.version.__file__).resolve().parent)
    return [sys.executable, "-P", "-c", CHILD, package, str(os.getpid()), "proxy", "-c", config_path]


class LocalProxy:
    def __init__(self, config_path: str) -> None:
        self.config_path = config_path
        self.process: asyncio.subprocess.Process | None = None
        self.thread: _ProxyThread | None = None

    async def launch(self) -> None:
        """Start the child without waiting for it: its imports and start-up overlap the runner's own
        (issue 23); `start()` then waits for its ready line."""
        if self.process is None and not in_process():
            self.process = await asyncio.create_subprocess_exec(
                *proxy_command(self.config_path),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )

    async def start(self) -> None:
        if in_process():
            self.thread = _ProxyThread(self.config_path)
            await self.thread.start()
            return
        await self.launch()
        assert self.process is not None and self.process.stdout is not None
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
        if self.thread is not None:
            self.thread.check_alive()
        if self.process is not None and self.process.returncode is not None:
            raise InfrastructureError(f"the proxy process died (exit {self.process.returncode}) during the run")

    async def stop(self) -> None:
        if self.thread is not None:
            await self.thread.stop()
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


class _ProxyThread:
    """`flakeproxy proxy -c CONFIG` in a thread: the same ProxyServer, run by asyncio.run as the child runs it, with
    the child's environment options (FLAKEPROXY_ADMIN, FLAKEPROXY_TOKEN); the child's stderr lines are kept."""

    def __init__(self, config_path: str) -> None:
        self.config_path = config_path
        self.ready: Future[None] = Future()  # set when it serves, or with what stopped it before
        self.ended = threading.Event()
        self.stopping = False
        self.server: ProxyServer | None = None
        self.warnings: list[str] = []
        self.thread = threading.Thread(target=self._serve, name="flakeproxy-proxy", daemon=True)

    def _serve(self) -> None:
        try:
            from flakeproxy.addons.server import ProxyServer  # the child's imports, once per process
            from flakeproxy.config import load_config

            config = load_config(self.config_path)
            env = {k: os.environ.get(f"FLAKEPROXY_{k.upper()}") or None for k in ("admin", "token")}
            self.server = ProxyServer(config, admin=env["admin"], token=env["token"])
            serving = self.server.run(
                on_ready=lambda _: self.ready.set_result(None), handle_signals=False, on_warning=self.warnings.append
            )
            asyncio.run(serving)
        except FlakeproxyError as e:
            self._ended(InfrastructureError(str(e)))
        except Exception as e:  # a bug: say what, as the child's traceback would
            self._ended(InfrastructureError(f"{type(e).__name__}: {e}"))
        else:
            self._ended(InfrastructureError("the proxy stopped before it was ready"))

    def _ended(self, error: InfrastructureError) -> None:
        if not self.ready.done():
            self.ready.set_exception(error)
        self.ended.set()

    async def start(self) -> None:
        self.thread.start()
        try:
            await asyncio.wait_for(asyncio.wrap_future(self.ready), 30)
        except TimeoutError:
            await self.stop()
            raise InfrastructureError("the proxy did not start: no ready line in 30 s") from None
        except InfrastructureError as e:
            raise InfrastructureError(f"the proxy did not start: {e}") from None

    def check_alive(self) -> None:
        if self.ended.is_set() and not self.stopping:
            raise InfrastructureError("the in-process proxy stopped during the run")

    async def stop(self) -> None:
        self.stopping = True
        if self.server is not None:
            self.server.shutdown()
        await asyncio.to_thread(self.thread.join, 15)


def needs_local_proxy(config: FlakeproxyConfig) -> bool:
    """A local run with something on the wire to break starts its own proxy (a sidecar's runs use proxy.admin_url)."""
    proxy = config.proxy
    return proxy.admin_url is None and bool(proxy.listeners or proxy.forward)


async def launch_local(config: FlakeproxyConfig, config_path: str) -> LocalProxy | None:
    """Launch the run's local proxy, if it has one, before anything else (issue 23: the proxy's start overlaps
    the runner's imports and planning); hand it to run_contract_async, which stops it whatever happens."""
    if not needs_local_proxy(config):
        return None
    local = LocalProxy(config_path)
    await local.launch()
    return local
