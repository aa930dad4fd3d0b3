"""Event loops in threads, so a test can drive sync clients against real servers."""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket
import threading
from collections import deque
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from tests.support.shared import worker

T = TypeVar("T")
_handed_out: deque[int] = deque(maxlen=256)


def free_port() -> int:
    """A loopback port free now, that no other xdist worker of this run can be handed (the ports come in blocks of
    64, block b belongs to worker b modulo n; not a port's own parity: Linux hands out odd ports to bind(0)), nor
    one this process handed out lately (a test may not have bound it yet)."""
    index, count = worker()
    for _ in range(1000):
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
def running_app(routes: list[Any], name: str = "app") -> Iterator[str]:
    """An aiohttp app with these routes on a free loopback port, in its own loop thread; yields its URL."""
    from aiohttp import web

    port = free_port()
    thread = LoopThread(name)

    async def start() -> web.AppRunner:
        app = web.Application()
        app.add_routes(routes)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        return runner

    runner = thread.run(start())
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        thread.run(runner.cleanup())
        thread.close()
