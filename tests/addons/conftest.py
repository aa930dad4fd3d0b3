"""Collect garbage after every proxy test, so a leaked socket or transport fails the test that leaked it
(warnings are errors) instead of whichever test the garbage collector happens to run in."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _collect_garbage() -> Iterator[None]:
    yield
    gc.collect()
