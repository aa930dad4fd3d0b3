"""The run's local proxy: the child process (runner/proxy_child.py starts and ends it) or, in the test suite, a
thread of this process; launched before anything else, and noticed if it dies.

With FLAKEPROXY_IN_PROCESS_PROXY=1 (the test suite sets it) the same proxy, the one `flakeproxy proxy` runs (the
config's listeners, flakeproxy's addons on mitmproxy's master, real sockets), runs in a thread of this process
with its own event loop instead: it spares each run the child's 2 s of imports. What the child alone does (end
with the runner, die apart from it) is then not exercised, so the tests of that run without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import threading
from collections import deque
from concurrent.futures import Future
from typing import TYPE_CHECKING

from flakeproxy.errors import FlakeproxyError, InfrastructureError
from flakeproxy.runner.proxy_child import Child, end_child, hand_config, in_process, start_proxy

if TYPE_CHECKING:
    from flakeproxy.addons.server import ProxyServer
    from flakeproxy.config import FlakeproxyConfig, WireConfig


class LocalProxy:
    """config: the runner's validated config, handed to the proxy it starts (runner/forked.py), which then runs
    it without reading config_path; without one, the proxy reads config_path."""

    def __init__(self, config_path: str, child: Child | None = None, config: WireConfig | None = None) -> None:
        self.config_path, self.config = config_path, config
        self.process: Child | None = None
        self.said: deque[str] = deque(maxlen=50)  # the child's last stderr lines
        self.reader: threading.Thread | None = None
        self.thread: _ProxyThread | None = None
        if child is not None:
            self._adopt(child)

    def _adopt(self, child: Child) -> None:
        hand_config(child, self.config)  # a child started `handed` waits for it (none: it reads config_path)
        self.process = child
        self.reader = threading.Thread(target=self._keep_stderr, name="flakeproxy-proxy-stderr", daemon=True)
        self.reader.start()

    def _keep_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        with contextlib.suppress(ValueError, OSError):  # closed under it: end_child gave up waiting for the end
            for line in self.process.stderr:
                self.said.append(line.decode(errors="replace").rstrip())

    async def launch(self) -> None:
        """Start the child without waiting for it: its imports and start-up overlap the runner's own
        (issue 23); `start()` then waits for its ready line."""
        if self.process is None and not in_process():
            self._adopt(start_proxy(self.config_path, handed=self.config is not None))

    async def start(self) -> None:
        if in_process():
            self.thread = _ProxyThread(self.config_path, self.config)
            await self.thread.start()
            return
        await self.launch()
        assert self.process is not None and self.process.stdout is not None
        try:
            line = await asyncio.wait_for(asyncio.to_thread(self.process.stdout.readline), 30)
        except TimeoutError:
            line = b""
        if not line.startswith(b"flakeproxy proxy ready"):
            await self.stop()  # its stderr read to the end: its last words
            said = "\n".join(self.said).strip().removeprefix("error: ")
            raise InfrastructureError(f"the proxy did not start: {said or 'no ready line in 30 s'}")

    def check_alive(self) -> None:
        if self.thread is not None:
            self.thread.check_alive()
        if self.process is not None and (code := self.process.poll()) is not None:
            raise InfrastructureError(f"the proxy process died (exit {code}) during the run")

    async def stop(self) -> None:
        if self.thread is not None:
            await self.thread.stop()
        if self.process is not None:
            await asyncio.to_thread(end_child, self.process, self.reader)


class _ProxyThread:
    """`flakeproxy proxy -c CONFIG` in a thread: the same ProxyServer, run by asyncio.run as the child runs it, at the
    config's admin with its token, as the child (which reads no FLAKEPROXY_ADMIN, FLAKEPROXY_TOKEN: forked.RUNNERS_OWN);
    the child's stderr lines are kept."""

    def __init__(self, config_path: str, config: WireConfig | None = None) -> None:
        self.config_path, self.config = config_path, config
        self.ready: Future[None] = Future()  # set when it serves, or with what stopped it before
        self.ended = threading.Event()
        self.stopping = False
        self.server: ProxyServer | None = None
        self.warnings: list[str] = []
        self.thread = threading.Thread(target=self._serve, name="flakeproxy-proxy", daemon=True)

    def _serve(self) -> None:
        try:
            from flakeproxy.addons.server import ProxyServer  # the child's imports, once per process

            self.server = ProxyServer(self._config())
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

    def _config(self) -> WireConfig:
        """As the child reads it: the runner's, through the same pickle (a copy of its own, which the proxy's
        thread may change without changing the runner's), else the file."""
        from flakeproxy.config import WireConfig, load_config
        from flakeproxy.config.wire_config import handed

        if self.config is None:
            return load_config(self.config_path, model=WireConfig)
        copy: WireConfig = pickle.loads(handed(self.config))
        return copy

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


async def launch_local(config: FlakeproxyConfig, config_path: str, early: Child | None = None) -> LocalProxy | None:
    """Launch the run's local proxy, if it has one, before anything else (issue 23: the proxy's start overlaps
    the runner's imports and planning), or adopt the one early_proxy started; hand it to run_contract_async, which
    stops it whatever happens. An early child the validated config does not want is stopped here."""
    if not needs_local_proxy(config):
        if early is not None:
            await asyncio.to_thread(end_child, early)
        return None
    local = LocalProxy(config_path, early, config)  # handed the config it validated
    await local.launch()
    return local
