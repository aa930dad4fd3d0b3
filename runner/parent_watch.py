"""The proxy child ends when the runner that started it dies, by any signal (SIGKILL included).

On Linux the kernel sends it SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG); everywhere, a watchdog thread
sees its parent change (it is re-parented) and sends it the same SIGTERM. SIGTERM stops the proxy cleanly.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1
POLL_S = 0.5


def _death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the watchdog below still does it


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        threading.Event().wait(POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)


def end_with_parent(parent: int) -> None:
    """From now on, this process gets SIGTERM when `parent` (the runner's pid) dies; at once if it already has."""
    _death_signal()
    if os.getppid() != parent:  # it died before the death signal was set
        os.kill(os.getpid(), signal.SIGTERM)
    threading.Thread(target=_watch, args=(parent,), name="flakeproxy-parent-watch", daemon=True).start()
