"""aiohttp's client without reading the system CA bundle while a contract run starts (issue 23).

aiohttp (3.10 and later) builds two client TLS contexts when its connector module is imported, and each reads the
system CA bundle: ~0.1-0.15 s of a contract run's start on a slow 2-core machine, on the runner's side, before the
runner can wait for its proxy. `defer()` imports aiohttp with that reading noted instead of done (in the importing
thread only: a context another thread builds meanwhile is built whole); `loaded()` does it, once, in a worker
thread (OpenSSL reads the bundle without holding the GIL), and the run awaits it before anything of its own or of
the agent's can make a request with those contexts (Engine._start: while it waits for its proxy). A process that
never called `defer()` is unchanged: `loaded()` then has nothing to do. Only `contract run` defers (cli/contract.py).
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: the readings noted by defer(), not yet done
_pending: list[Callable[[], None]] = []
_lock = threading.Lock()
#: the SSLContext methods that read the system's CA bundle (load_default_certs calls set_default_verify_paths)
READERS = ("load_default_certs", "set_default_verify_paths")


def defer() -> None:
    """Import aiohttp's client; the CA readings its import does are noted for loaded(). Nothing is done when aiohttp's
    connector is imported already (it read the bundle then)."""
    if "aiohttp.connector" in sys.modules:
        return
    with _noting(threading.get_ident()):
        import aiohttp.connector  # noqa: F401 (its module-level contexts are built now)


@contextmanager
def _noting(importer: int) -> Iterator[None]:
    """While inside: SSLContext's CA readings in the `importer` thread are noted in _pending, not done."""
    before = {name: ssl.SSLContext.__dict__.get(name) for name in READERS}
    for name in READERS:
        setattr(ssl.SSLContext, name, _later(getattr(ssl.SSLContext, name), importer))
    try:
        yield
    finally:
        for name, own in before.items():
            if own is None:
                delattr(ssl.SSLContext, name)  # inherited from _ssl._SSLContext: inherited again
            else:
                setattr(ssl.SSLContext, name, own)


def _later(read: Callable[..., Any], importer: int) -> Callable[..., Any]:
    @functools.wraps(read)
    def noted(context: ssl.SSLContext, *args: Any) -> Any:
        if threading.get_ident() != importer:
            return read(context, *args)
        _pending.append(functools.partial(read, context, *args))
        return None

    return noted


def load_now() -> None:
    """Do the readings defer() noted, once (a second caller waits for the first)."""
    with _lock:
        while _pending:
            _pending.pop(0)()


def deferred() -> bool:
    """Readings are noted and not yet done."""
    return bool(_pending)


async def loaded() -> None:
    """The noted readings done, in a worker thread (at once if there are none)."""
    if _pending:
        await asyncio.to_thread(load_now)
