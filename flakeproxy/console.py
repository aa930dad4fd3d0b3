"""What a run says on stdout and stderr, when their reader may be gone.

A run piped into `head -1`, or whose terminal closed, meets a broken pipe at its next line: Python raises
BrokenPipeError there, and a run that let it through stopped half-way, or finished and exited 1 ("the contract
failed") without a word. A run's verdict and files must not hang on whether someone still reads its progress: a
stream whose reader is gone points at /dev/null from then on (the other stream is left alone), the run goes on,
writes its files, and exits with its verdict's code.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import IO

import click


def echo(text: str, err: bool = False) -> None:
    """click.echo, except that a stream whose reader is gone is silenced instead of raising."""
    try:
        click.echo(text, err=err)
    except BrokenPipeError:
        silence(2 if err else 1)


def std_stream(fd: int) -> IO[str]:
    """A text stream on standard fd 0, 1 or 2 (UTF-8, line-buffered; stderr never fails on a character), never
    closing it: Python's own, put back where a process lacks it or has another object in its place."""
    mode, errors = ("r", "strict") if fd == 0 else ("w", "backslashreplace" if fd == 2 else "strict")
    return open(fd, mode, encoding="utf-8", errors=errors, buffering=1 if fd else -1, closefd=False)


def silence(fd: int) -> None:
    """fd (1 or 2) writes into /dev/null from now on, what its stream still buffers dropped with it."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)
    stream = sys.stdout if fd == 1 else sys.stderr
    with contextlib.suppress(OSError, ValueError, AttributeError):
        stream.flush()  # what it buffered goes to /dev/null now, not into a second broken pipe
