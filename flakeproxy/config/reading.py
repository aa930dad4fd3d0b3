"""Reading a file a user named (a config, a session file): a regular file, bounded in size, UTF-8, and never
echoed in an error.

A config may point anywhere: /dev/zero (read forever), a FIFO (blocks forever), /etc/shadow. So a path must be a
regular file (after symlinks), at most `limit` bytes, read with a bound, and the one-line errors name the path,
its kind or size and the fix, never a byte of what it holds.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from flakeproxy.errors import ConfigError

MIB = 1024 * 1024
_KINDS = {
    stat.S_ISDIR: "a folder",
    stat.S_ISFIFO: "a FIFO (named pipe)",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}

#: The largest config read: a config is a few KiB; recorded sessions belong in files (replays.sources).
MAX_CONFIG_BYTES = MIB  # load_config, and early_proxy (runner/proxy_child.py) before it


def _size(n: int) -> str:
    return f"{n / MIB:.1f} MiB" if n >= MIB else f"{n} bytes"


def check_regular(path: Path, what: str, limit: int) -> None:
    """ConfigError unless path is a regular file of at most `limit` bytes."""
    try:
        info = path.stat()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the {what} ({e.strerror}); fix the path") from e
    kind = next((name for test, name in _KINDS.items() if test(info.st_mode)), None)
    if kind is not None or not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: is {kind or 'not a regular file'}, not a {what}; name a regular file")
    if info.st_size > limit:
        raise ConfigError(f"{path}: is {_size(info.st_size)}; a {what} is at most {_size(limit)}")


def read_text(path: Path, what: str, limit: int) -> str:
    """The file's text: a regular file, at most `limit` bytes, UTF-8; else a one-line ConfigError (exit 2)."""
    check_regular(path, what, limit)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # never wait on what replaced it meanwhile
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise ConfigError(f"{path}: is not a regular file, not a {what}; name a regular file")
            data = f.read(limit + 1)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the {what} ({e.strerror}); check its permissions") from e
    if len(data) > limit:
        raise ConfigError(f"{path}: is larger than {_size(limit)}, the most a {what} may be")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: is not UTF-8 text (byte {e.start} is not), so not a {what}") from e
