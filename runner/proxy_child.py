"""The proxy child of a local run: its start (forked where it can be, runner/forked.py, else spawned), its early
start, its end. No asyncio, no config models: `contract run` starts the child from here before it imports them
(issue 23), so its start-up overlaps theirs.

A spawned child must import the very flakeproxy package this runner runs from (a forked one is this process).
`python -m flakeproxy` would put the working directory first on sys.path, and from a clone's root the source
folder `flakeproxy/` (which lacks addons/ and runner/, mapped under it only at install) would shadow the installed
package. So the child runs with `-P` (no working directory or script folder on sys.path) and checks, before
anything else, that the package it found is ours; otherwise it says which two it saw and exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

import flakeproxy.version
from flakeproxy.errors import FlakeproxyError
from flakeproxy.runner.forked import RUNNERS_OWN, ForkedChild, can_fork, fork_proxy, hand_over

if TYPE_CHECKING:
    from flakeproxy.config import WireConfig

IN_PROCESS = "FLAKEPROXY_IN_PROCESS_PROXY"


class Child(Protocol):
    """The proxy child as the runner uses it: a subprocess.Popen, or a ForkedChild (runner/forked.py)."""

    @property
    def pid(self) -> int: ...

    @property
    def stdout(self) -> IO[bytes] | None: ...

    @property
    def stderr(self) -> IO[bytes] | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


def in_process() -> bool:
    """The test suite's switch: the proxy runs in a thread of this process instead of as the child."""
    return os.environ.get(IN_PROCESS) == "1"


# Run as `python -P -c CHILD <our package folder> <runner pid> <config pipe fd, or -> proxy -c CONFIG`. It ends
# when the runner dies, by any signal (it runs in a session of its own, so the runner's process group signals do
# not reach it). Given a pipe, it waits there for the runner's validated config, as a forked child does.
CHILD = (
    "import os, sys\n"
    "import flakeproxy\n"
    "want, found = sys.argv[1], os.path.dirname(os.path.realpath(flakeproxy.__file__))\n"
    "if found != want:\n"
    "    sys.exit(f'error: the proxy would import flakeproxy from {found}, not from {want} where this run'\n"
    "             ' started; unset PYTHONPATH or reinstall flakeproxy into this environment')\n"
    "from flakeproxy.runner.parent_watch import end_with_parent\n"
    "end_with_parent(int(sys.argv[2]))\n"
    "from flakeproxy.cli import proxy\n"
    "from flakeproxy.cli.main import entry\n"
    "proxy.handed_fd = None if sys.argv[3] == '-' else int(sys.argv[3])\n"
    "entry(sys.argv[4:])\n"
)


def proxy_command(config_path: str, handed_fd: int | None = None) -> list[str]:
    """The child's command line: this interpreter, isolated from the working directory, our package."""
    package = str(Path(flakeproxy.version.__file__).resolve().parent)
    fd = "-" if handed_fd is None else str(handed_fd)
    return [sys.executable, "-P", "-c", CHILD, package, str(os.getpid()), fd, "proxy", "-c", config_path]


def child_environment() -> dict[str, str]:
    """The environment of the run's proxy: the runner's, without RUNNERS_OWN."""
    return {k: v for k, v in os.environ.items() if k not in RUNNERS_OWN}


class SpawnedChild(subprocess.Popen[bytes]):
    """The spawned proxy, and the pipe it waits on for its config, until handed (or closed)."""

    handing: int | None = None

    def hand(self, config: WireConfig | None) -> None:
        fd, self.handing = self.handing, None
        hand_over(fd, config)


def spawn_proxy(config_path: str, handed: bool = False) -> SpawnedChild:
    """The child, started now, in a session of its own, its stdout and stderr piped (LocalProxy reads its ready
    line and keeps its last stderr lines); handed: it waits for hand_config, as a forked one does."""
    config_r, config_w = os.pipe() if handed else (None, None)
    try:
        child = SpawnedChild(
            proxy_command(config_path, config_r),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=child_environment(),
            pass_fds=() if config_r is None else (config_r,),
        )
    except BaseException:
        hand_over(config_w, None)
        raise
    finally:
        if config_r is not None:
            os.close(config_r)
    child.handing = config_w
    return child


def start_proxy(config_path: str, handed: bool = False) -> Child:
    """The child, started now: forked where this process can fork safely (runner/forked.py), else spawned;
    handed: it waits for hand_config to give it the runner's validated config (or None: it reads config_path)."""
    return fork_proxy(config_path, handed) if can_fork() else spawn_proxy(config_path, handed)


def hand_config(child: Child, config: WireConfig | None) -> None:
    """The runner's validated config to a child started `handed` (None: it reads its file); else nothing. A
    child handed it needs neither the file nor the environment it was read in: FLAKEPROXY_TOKEN, kept from it
    (RUNNERS_OWN), may be what proxy.token says."""
    if isinstance(child, ForkedChild | SpawnedChild):
        child.hand(config)


def early_proxy(config_path: str) -> Child | None:
    """`contract run`'s first step, before it imports the runner and the config models (issue 23): the child
    starts now when the config plainly asks for a local proxy (read as YAML with ${VAR} expanded, not validated).
    launch_local then adopts it, or stops it if the validated config says otherwise; a config it cannot read
    starts nothing here (load_config says what is wrong)."""
    if in_process():
        return None
    from flakeproxy.config.reading import MAX_CONFIG_BYTES, read_text
    from flakeproxy.config.yamlsource import expand_env, parse_yaml

    try:
        data = expand_env(parse_yaml(read_text(Path(config_path), "config", MAX_CONFIG_BYTES), config_path))
    except (FlakeproxyError, OSError):
        return None
    proxy = data.get("proxy") if isinstance(data, dict) else None  # needs_local_proxy's rule, on the raw YAML
    if not isinstance(proxy, dict) or proxy.get("admin_url") or not (proxy.get("listeners") or proxy.get("forward")):
        return None
    return start_proxy(config_path, handed=True)  # launch_local hands it the config once validated


def end_child(child: Child, reader: threading.Thread | None = None) -> None:
    """SIGTERM to the child's session, SIGKILL after 10 s; returns once it is gone (at once if it is), its stderr
    read to the end by `reader`, and its pipes closed."""
    if child.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGTERM)
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    if reader is not None:
        reader.join(5)
    hand_config(child, None)  # the config pipe of a child that ended before it was handed one: closed
    for pipe in (child.stdout, child.stderr):
        if pipe is not None:
            pipe.close()
