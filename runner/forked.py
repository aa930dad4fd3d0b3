"""The proxy child by fork(), without a new interpreter: on Linux, from a runner that has one thread.

A spawned child starts a Python interpreter and imports click, YAML and the CLI again before it imports mitmproxy:
~55 ms of CPU that the proxy's start-up, the longest step of a short run, waited for (issue 23). A fork inherits
them. It is safe only where the runner has a single thread (fork copies one thread; a lock another thread held
would stay held in the child), so `can_fork()` reads the kernel's thread count, as CPython's own warning does, and
anything else spawns. The forked child runs `flakeproxy proxy -c CONFIG` as the spawned one does, in a session of
its own, its stdout and stderr on pipes to the runner, stdin on /dev/null, nothing else inherited; it never returns
into the runner's code (it ends with os._exit). Its command line is the runner's, so it names itself CHILD_NAME
(`ps -o comm`, top).

A child forked to be handed its config (`fork_proxy(..., handed=True)`, what `contract run` starts before it has
validated anything; a spawned one, runner/proxy_child.py, alike) imports mitmproxy first and then reads the
runner's validated config from a pipe (`hand_over`), pickled: the runner's own process image wrote it, nothing
from outside. It then validates nothing again (~30 ms of its start-up, issue 23) and runs exactly what the runner
validated, its command-line overrides and its environment's values included. A pipe closed with nothing on it
(`hand(None)`) sends it to the file instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from flakeproxy.config import WireConfig

CHILD_NAME = b"fp-proxy-child"  # at most 15 bytes: the kernel's limit for a process's name
#: `flakeproxy proxy` reads these (--admin, --token); the run's own proxy must not: the runner reaches it at the
#: config's proxy.admin with the config's proxy.token, so a variable meant for a sidecar would put it out of reach.
RUNNERS_OWN = ("FLAKEPROXY_ADMIN", "FLAKEPROXY_TOKEN")


def can_fork() -> bool:
    """Linux, and this process has one thread (Python's or any library's)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    threads = [line.split()[1] for line in status.splitlines() if line.startswith("Threads:")]
    return threads == ["1"]


class ForkedChild:
    """The forked proxy: what LocalProxy and end_child use of a subprocess.Popen (pid, stdout, stderr, poll,
    wait, returncode)."""

    def __init__(self, pid: int, stdout: IO[bytes], stderr: IO[bytes], handing: int | None = None) -> None:
        self.pid, self.stdout, self.stderr = pid, stdout, stderr
        self.handing = handing  # the pipe the child waits for its config on, until handed (or closed)
        self.args = ["flakeproxy", "proxy"]
        self.returncode: int | None = None
        self._lock = threading.Lock()  # poll() from the event loop and from end_child's thread
        try:
            self._pidfd: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):  # a kernel before 5.3, or a sandbox without the call: wait() polls
            self._pidfd = None

    def hand(self, config: WireConfig | None) -> None:
        """Give the child the runner's validated config, or None: it reads the file (hand_over)."""
        fd, self.handing = self.handing, None
        hand_over(fd, config)

    def poll(self) -> int | None:
        with self._lock:
            if self.returncode is None:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
                    if self._pidfd is not None:
                        os.close(self._pidfd)
                        self._pidfd = None
            return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            pidfd = self._pidfd
            if pidfd is None:
                time.sleep(min(0.005, left) if left is not None else 0.005)
                continue
            with contextlib.suppress(OSError, ValueError):  # closed by a poll() in another thread meanwhile
                select.select([pidfd], [], [], left)  # readable once the child has ended
        return code


def fork_proxy(config_path: str, handed: bool = False) -> ForkedChild:
    """`flakeproxy proxy -c config_path` in a forked child (can_fork() must be true); handed: it waits for its
    config from ForkedChild.hand once its imports are done, and reads config_path only if handed None."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # None: a process started without it (pythonw, `>&-` outside the CLI)
            stream.flush()  # or the child would write what this process had not written yet a second time
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    config_r, config_w = os.pipe() if handed else (None, None)
    pid = os.fork()
    if pid == 0:
        _be_the_proxy(config_path, out_w, err_w, config_r)
    for fd in (out_w, err_w, config_r):
        if fd is not None:
            os.close(fd)
    return ForkedChild(pid, os.fdopen(out_r, "rb"), os.fdopen(err_r, "rb"), config_w)


def hand_over(fd: int | None, config: WireConfig | None) -> None:
    """The runner's validated config (its wire_view, pickled) into the pipe a child waits on (fd; None: handed
    already), or nothing: the child then reads the file. The write is a thread's, not the caller's: the child reads
    only once its imports are done, and a config larger than the pipe's buffer would hold the event loop until
    then."""
    if fd is None:
        return
    if config is None:
        os.close(fd)
        return
    from flakeproxy.config.wire_config import handed

    data = handed(config)
    threading.Thread(target=_write_and_close, args=(fd, data), name="flakeproxy-hand-config", daemon=True).start()


def _write_and_close(fd: int, data: bytes) -> None:
    with contextlib.suppress(OSError), os.fdopen(fd, "wb") as pipe:  # a child that died meanwhile: EPIPE
        pipe.write(data)


def _be_the_proxy(config_path: str, out_w: int, err_w: int, config_r: int | None) -> NoReturn:
    """The child's whole life: the proxy command, then os._exit with its exit code; never back into the runner."""
    code = 1
    try:
        # the interpreter's own handlers, not what the runner held while it started (cli/held.py): the proxy's
        # loop installs its own once it runs, and until then a SIGTERM from end_child must end it
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        parent = os.getppid()
        os.setsid()  # the runner's process group signals (Ctrl-C at its terminal) are the runner's to handle
        # the config pipe above the three the child's stdin, stdout and stderr become, whatever numbers it had
        config_fd = None if config_r is None else fcntl.fcntl(config_r, fcntl.F_DUPFD, 3)
        null = os.open(os.devnull, os.O_RDONLY)
        for fd, to in ((null, 0), (out_w, 1), (err_w, 2)):
            os.dup2(fd, to)
        # Python's streams on them, whatever the runner's process had put in their place (pytest's capture, an
        # embedding program's): the ready line goes to the runner's pipe, not into the runner's copy of an object
        from flakeproxy.console import std_stream  # imported already: click, which it needs, is the runner's

        sys.stdin, sys.stdout, sys.stderr = std_stream(0), std_stream(1), std_stream(2)
        keep = [] if config_fd is None else [config_fd]
        for low, high in zip([3, *(fd + 1 for fd in keep)], [*keep, os.sysconf("SC_OPEN_MAX")], strict=True):
            os.closerange(low, high)  # what a spawned child's close_fds closes
        with contextlib.suppress(OSError):
            Path("/proc/self/comm").write_bytes(CHILD_NAME)
        from flakeproxy.runner.parent_watch import end_with_parent

        end_with_parent(parent)
        for name in RUNNERS_OWN:  # served at the config's admin, with its token: where the runner reaches it
            os.environ.pop(name, None)
        from flakeproxy.cli import proxy
        from flakeproxy.cli.main import entry

        proxy.handed_fd = config_fd
        entry(["proxy", "-c", config_path])  # ends the process itself once it has stopped cleanly
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0 if e.code is None else _said(str(e.code))
    except BaseException:  # a bug: its traceback, as the spawned child's interpreter would print it
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _said(message: str) -> int:
    """sys.exit("text"), as the interpreter ends it: the text on stderr, exit 1."""
    print(message, file=sys.stderr)
    return 1
