"""The MCP rows of the fidelity table: the `mcp` client against a real MCP server's failure, and through
flakeproxy with the matching tool fault over the same server working normally."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("mcp", reason="the mcp SDK installs beside mitmproxy 12 on Python 3.13+ only")

from tests.fidelity.mcp_world import MCP_ROWS, McpRow, McpWorld, mcp_search, running_mcp_world, summary
from tests.support.proxy import Proxy, config_for, running_proxy

TARGETS = {"web_search": {"listener": "mcp", "mcp_tool": "web_search"}}


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[McpWorld, Proxy]]:
    with running_mcp_world() as server, running_proxy(config_for({"mcp": server.url}, TARGETS)) as proxy:
        yield server, proxy


@pytest.mark.parametrize("row", MCP_ROWS, ids=[r.fault for r in MCP_ROWS])
def test_mcp_row(world: tuple[McpWorld, Proxy], row: McpRow) -> None:
    server, proxy = world
    server.fail, server.calls = row.fail, 0
    try:
        real = mcp_search(server.url)
    finally:
        server.fail = None
    assert summary(real, server.calls) == row.sees
    proxy.control.ok("POST", "/reset")
    proxy.control.scenario("fidelity", tool_faults=[{"tool": "web_search", **row.inject}])
    cell = proxy.control.begin()
    server.calls = 0
    injected = mcp_search(proxy.listeners["mcp"])
    faulted = [e for e in proxy.control.end(cell) if e["fault"]]
    assert server.calls == 0  # the tool call never reached the server: the proxy answered
    assert summary(injected, len(faulted)) == row.sees
    assert injected.as_dict() == real.as_dict()
