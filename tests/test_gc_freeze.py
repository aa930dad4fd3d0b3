"""The per-test garbage collection still sees what a test leaks after the session's gc.freeze() (tests/conftest.py):
the freeze covers only what was alive at collection, never what tests make later."""

from __future__ import annotations

import gc
import socket
import weakref

import pytest


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_the_session_froze_what_collection_left() -> None:
    assert gc.get_freeze_count() > 0


def test_garbage_made_by_a_test_is_collected() -> None:
    leaked = Cycle()
    gone = weakref.ref(leaked)
    del leaked
    gc.collect()
    assert gone() is None


def test_a_socket_leaked_in_a_cycle_still_warns_when_collected() -> None:
    holder = Cycle()
    holder.sock = socket.socket()  # type: ignore[attr-defined]
    del holder
    with pytest.warns(ResourceWarning, match="unclosed"):
        gc.collect()
