"""Finding a run's proxy child among the machine's processes: spawned, its command line is `... proxy -c CONFIG`;
forked (runner/forked.py), it has its runner's command line (`... contract run -c CONFIG`) and names itself
CHILD_NAME."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from flakeproxy.runner.forked import CHILD_NAME


def proxy_children(config: Path) -> list[int]:
    """The pids of the proxy children running for `config` (zombies excluded: they no longer run)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            name = (entry / "comm").read_bytes().strip()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, ValueError, IndexError):
            continue
        ours = str(config).encode() in cmdline and (b"proxy" in cmdline or name == CHILD_NAME)
        if ours and state != "Z":
            found.append(int(entry.name))
    return found


def kill_proxy_children(config: Path) -> int:
    """SIGKILL to each; how many there were."""
    pids = proxy_children(config)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return len(pids)
