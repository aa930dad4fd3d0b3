"""The proxy child ends when the runner that started it dies, by any signal (SIGKILL included).

On Linux the kernel sends it SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG); everywhere, a watchdog thread
sees its parent change (it is re-parented) and sends it the same SIGTERM. SIGTERM stops the proxy cleanly.
The watchdog asks for the death signal after its first poll, not at once: importing ctypes costs ~10 ms, which the
proxy's start-up would wait for (issue 23); until then the poll alone watches.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1
POLL_S = 0.5


def _death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # here: see above

    try:
        # this process's own symbols, libc's among them: find_library("c") would run `ldconfig -p` in a child
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the watchdog below still does it


def _watch(parent: int) -> None:
    asked = False
    while os.getppid() == parent:  # after the death signal is set, too: a parent that died before it was
        threading.Event().wait(POLL_S)
        if not asked:
            _death_signal()
            asked = True
    os.kill(os.getpid(), signal.SIGTERM)


def end_with_parent(parent: int) -> None:
    """From now on, this process gets SIGTERM when `parent` (the runner's pid) dies; at once if it already has."""
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)
    threading.Thread(target=_watch, args=(parent,), name="flakeproxy-parent-watch", daemon=True).start()
