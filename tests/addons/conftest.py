"""Fixtures of the addon tests (garbage collection after each test is tests/conftest.py's, for every test)."""

from __future__ import annotations

import pytest

from flakeproxy.addons import buffering


@pytest.fixture(params=["buffered", "streamed"])
def body_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A test on both of the proxy's paths (issue 23): small bodies of a known length read whole (the default),
    and every body streamed as it comes. Fault tests use it (`pytestmark`) so each fault runs both ways."""
    if request.param == "streamed":
        monkeypatch.setattr(buffering, "BUFFER_BELOW_BYTES", 0)
    return str(request.param)
