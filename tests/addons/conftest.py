"""Fixtures of the addon tests (garbage collection after each test is tests/conftest.py's, for every test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flakeproxy.addons import buffering
from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.upstream import RunningUpstream, Upstream


@pytest.fixture(params=["buffered", "streamed"])
def body_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A test on both of the proxy's paths (issue 23): small bodies of a known length read whole (the default),
    and every body streamed as it comes. Fault tests use it (`pytestmark`) so each fault runs both ways."""
    if request.param == "streamed":
        monkeypatch.setattr(buffering, "BUFFER_BELOW_BYTES", 0)
    return str(request.param)


@pytest.fixture(scope="module")
def world(request: pytest.FixtureRequest) -> Iterator[tuple[Upstream, Proxy]]:
    """A real upstream and the real proxy in front of it (listener `tools`), from the test module's TARGETS and
    MATRIX; a module with a world of another shape defines its own `world`."""
    targets, matrix = request.module.TARGETS, request.module.MATRIX
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, targets, matrix)) as proxy:
        yield up, proxy


@pytest.fixture
def clean(world: tuple[Upstream, Proxy]) -> None:
    """The proxy as it started: no scenario, no episode, an empty journal (pytestmark usefixtures("clean"))."""
    world[1].control.ok("POST", "/reset")
