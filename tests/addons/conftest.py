"""Collect garbage after every proxy test, so a leaked socket or transport fails the test that leaked it
(warnings are errors) instead of whichever test the garbage collector happens to run in."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from flakeproxy.addons import buffering


@pytest.fixture(autouse=True)
def _collect_garbage() -> Iterator[None]:
    yield
    gc.collect()


@pytest.fixture(params=["buffered", "streamed"])
def body_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A test on both of the proxy's paths (issue 23): small bodies of a known length read whole (the default),
    and every body streamed as it comes. Fault tests use it (`pytestmark`) so each fault runs both ways."""
    if request.param == "streamed":
        monkeypatch.setattr(buffering, "BUFFER_BELOW_BYTES", 0)
    return str(request.param)
