"""The fidelity table: every fault, for every official client, against the real failure it imitates."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")
pytest.importorskip("anthropic", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

from tests.conftest import REPO
from tests.fidelity.compare import mismatches, run_direct, run_proxied
from tests.fidelity.real_upstream import RealUpstream
from tests.fidelity.row import Row
from tests.fidelity.rows import REAL, ROWS
from tests.fidelity.table import in_page, render
from tests.fidelity.world import fidelity_world
from tests.support.proxy import Proxy

World = tuple[RealUpstream, Proxy]


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    pytest.importorskip("google.genai", reason="google-genai is a dev dependency (Python 3.13+)")
    with fidelity_world() as w:
        yield w


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_row(world: World, row: Row) -> None:
    up, proxy = world
    real = run_direct(row, up)
    assert real.summary(row) == row.sees, "the client's reaction to the real failure changed (update rows.SEES)"
    injected = run_proxied(row, proxy)
    assert mismatches(real, injected) == []


def test_the_table_is_wide_enough() -> None:
    """At least 24 rows, every client in it, every mode of the issue a row."""
    assert len(ROWS) >= 24
    assert {r.client for r in ROWS} == {"py-openai", "py-anthropic", "node-openai", "node-anthropic", "py-gemini"}
    modes = {r.inject["mode"] for r in ROWS}
    assert {"rate_limit", "error", "overloaded", "stream_cut", "mid_stream_error", "truncated_response"} <= modes
    assert {"tool_call_corruption", "stream_reset", "context_length_exceeded", "timeout", "request_too_large"} <= modes
    assert any(r.inject.get("should_retry") is True for r in ROWS)
    assert any(r.inject.get("responses_event") == "response.failed" for r in ROWS)
    assert any(r.inject.get("should_retry") is False for r in ROWS)
    assert any(r.inject.get("error_code") == 408 for r in ROWS)


def test_stream_reset_gives_api_connection_error_in_both_python_sdks_and_the_journal_says_where(world: World) -> None:
    _, proxy = world
    for row in [r for r in ROWS if r.inject["mode"] == "stream_reset" and r.client.startswith("py-")]:
        injected = run_proxied(row, proxy)
        if row.call == "json" or row.client == "py-openai":
            assert injected.seen.error == "APIConnectionError", row.id
    proxy.control.ok("POST", "/reset")
    proxy.control.scenario("s", llm_faults=[{"tool": "chat", "mode": "stream_reset", "after_events": 3}])
    cell = proxy.control.begin()
    row = next(r for r in ROWS if r.id == "stream_reset-py-openai-stream")
    from tests.fidelity.clients import run_client

    run_client(row.client, proxy.listeners["llm"], row.call, row.max_retries, row.timeout)
    (entry,) = proxy.control.end(cell)
    assert entry["error"].startswith("connection cut by fault mid-stream after 3 events")


def test_a_reply_without_the_provider_headers_is_a_failing_row(world: World) -> None:
    """Deliberately broken: a 529 from a tool target (no `api`) is a plain JSON error (no request-id header or
    body request_id). The SDK still raises OverloadedError after one attempt, yet the row must fail."""
    up, proxy = world
    row = Row(
        "overloaded_no_retry",
        "py-anthropic",
        "json",
        REAL["overloaded_no_retry"]["anthropic"],
        {"mode": "error", "error_code": 529, "should_retry": False},
        "OverloadedError 529; 1 attempt",
    )
    real = run_direct(row, up)
    injected = run_proxied(row, proxy, listener="plain", target="plain_claude", section="tool_faults")
    assert real.summary(row) == injected.summary(row) == row.sees  # the coarse reaction alone would pass
    found = mismatches(real, injected)
    assert "request_id: real True, injected False" in found
    assert "header request-id (attempt 1): real '<id>', injected None" in found


def test_the_documented_table_is_generated_from_the_rows() -> None:
    page = (REPO / "docs" / "performance.md").read_text()
    assert in_page(page) == render(), "run bash scripts/fidelity_table"
