"""Event loops in threads, so a test can drive sync clients against real servers."""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import socket
import ssl
import threading
from collections import deque
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from tests.support.shared import worker

T = TypeVar("T")
_handed_out: deque[int] = deque(maxlen=256)


def _listening_range() -> range:
    """Ports below the kernel's ephemeral range (ip_local_port_range), from 20000: no outgoing connection is ever
    given one as its local port, so a port found free stays free until the test binds it. Handing out bind(0)'s
    ephemeral ports let a client's connection take one first (seen with 4 workers: "Address already in use")."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return range(0)
    return range(20000, low) if low > 21000 else range(0)


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port free now, that no other xdist worker of this run can be handed (the ports come in blocks of
    64, block b belongs to worker b modulo n), nor one this process handed out lately (a test may not have bound it
    yet); below the ephemeral range where there is one (_listening_range), else what bind(0) gives."""
    index, count = worker()
    ours = [p for p in _listening_range() if p // 64 % count == index]
    for _ in range(1000):
        if ours:
            port = random.choice(ours)
            if not _bindable(port):
                continue
        else:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
        if port // 64 % count == index and port not in _handed_out:
            _handed_out.append(port)
            return port
    raise RuntimeError(f"no free loopback port for worker {index} of {count} in 1000 tries")


class LoopThread:
    """An asyncio loop running in a daemon thread."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 15) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        """Cancel what is still running (e.g. connection handlers), let it clean up, then stop."""
        self.run(_cancel_others(), timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        if not self.thread.is_alive():
            self.loop.close()


async def _cancel_others() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks, timeout=5) if tasks else None
    await asyncio.sleep(0)  # let transports run their close callbacks


@contextmanager
def running_app(routes: list[Any], name: str = "app", tls: ssl.SSLContext | None = None) -> Iterator[str]:
    """An aiohttp app with these routes on a free loopback port, in its own loop thread; yields its URL (https with
    a server context `tls`)."""
    from aiohttp import web

    port = free_port()
    thread = LoopThread(name)

    async def start() -> web.AppRunner:
        app = web.Application()
        app.add_routes(routes)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, ssl_context=tls).start()
        return runner

    runner = thread.run(start())
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        thread.run(runner.cleanup())
        thread.close()
