"""MCP calls tied to their episode by the W3C trace context the official `mcp` client puts in `params._meta`
(SEP-414), with no trace headers on the HTTP request, while several episodes are open at once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK installs beside mitmproxy 12 on Python 3.13+ only")

from mcp import Client
from opentelemetry import context, propagate

from tests.support.mcp_server import McpServer, running_mcp_server
from tests.support.proxy import Proxy, config_for, running_proxy

TARGETS = {"web_search": {"listener": "mcp", "mcp_tool": "web_search"}, "mcp": {"listener": "mcp"}}
DOWN = {"name": "down", "tool_faults": [{"tool": "web_search", "mode": "is_error", "message": "search down"}]}
TRACE_A = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACE_B = "0af7651916cd43dd8448eb211c80319c"


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[McpServer, Proxy]]:
    with running_mcp_server() as server, running_proxy(config_for({"mcp": server.url}, TARGETS)) as proxy:
        yield server, proxy


@pytest.fixture(autouse=True)
def clean(world: tuple[McpServer, Proxy]) -> None:
    world[1].control.ok("POST", "/reset")


async def _search(url: str, carrier: dict[str, str]) -> Any:
    """One web_search through the official client, inside the trace the carrier names (none if empty)."""
    token = context.attach(propagate.extract(carrier))
    try:
        async with Client(url + "/mcp", read_timeout_seconds=10) as client:
            return await client.call_tool("web_search", {"query": "AAPL"})
    finally:
        context.detach(token)


def search(proxy: Proxy, carrier: dict[str, str]) -> Any:
    return asyncio.run(asyncio.wait_for(_search(proxy.listeners["mcp"], carrier), 30))


def traceparent(trace_id: str) -> dict[str, str]:
    return {"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"}


def tool_calls(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if '"tools/call"' in (e["request_body"] or "")]


def open_two(proxy: Proxy) -> tuple[str, str]:
    down = proxy.control.ok("POST", "/cells", {"label": "d", "scenario": DOWN, "trace_id": TRACE_A})["id"]
    calm = proxy.control.ok("POST", "/cells", {"label": "c", "scenario": None, "trace_id": TRACE_B})["id"]
    return str(down), str(calm)


def test_meta_traceparent_ties_each_call_to_its_episode(world: tuple[McpServer, Proxy]) -> None:
    server, proxy = world
    down, calm = open_two(proxy)
    before = server.calls["web_search"]
    failed, passed = search(proxy, traceparent(TRACE_A)), search(proxy, traceparent(TRACE_B))
    assert failed.is_error and failed.content[0].text == "search down"
    assert not passed.is_error and "189.50" in passed.content[0].text
    assert server.calls["web_search"] == before + 1  # only the calm episode's call reached the server
    journals = {cell: tool_calls(proxy.control.end(cell)) for cell in (down, calm)}
    for cell, trace in ((down, TRACE_A), (calm, TRACE_B)):
        [call] = journals[cell]
        assert call["cell"] == cell and trace in call["request_body"]  # the trace id came in the body's _meta
        assert not {"traceparent", "baggage"} & {name.lower() for name in call["request_headers"]}
    assert journals[down][0]["fault"]["kind"] == "is_error" and journals[calm][0]["fault"] is None


def test_meta_baggage_names_the_episode(world: tuple[McpServer, Proxy]) -> None:
    _, proxy = world
    down, calm = open_two(proxy)
    carrier = {**traceparent("1" * 32), "baggage": f"flakeproxy.episode={down}"}  # a trace no episode has
    assert search(proxy, carrier).is_error
    [call] = tool_calls(proxy.control.end(down))
    assert call["cell"] == down and call["fault"]["kind"] == "is_error" and call["fault"]["applied"]
    assert tool_calls(proxy.control.end(calm)) == []


def test_without_meta_the_call_is_reported_not_guessed(world: tuple[McpServer, Proxy]) -> None:
    server, proxy = world
    down, calm = open_two(proxy)
    before = server.calls["web_search"]
    assert not search(proxy, {}).is_error  # no episode: no fault, passed through
    assert server.calls["web_search"] == before + 1
    calls = tool_calls(proxy.control.journal())
    [call] = calls
    assert call["cell"] is None and sorted(call["cell_candidates"]) == sorted([down, calm])
