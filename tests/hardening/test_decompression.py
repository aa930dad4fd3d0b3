"""Decompression is bounded like the wire (issue 21 item 3): a body-rewriting fault gets at most 16 MiB of
decoded body. A ~1 MiB gzip answer holding 1 GiB of zeros drove the proxy past the size of the zeros (the
16 MiB cap counted bytes on the wire only); now the fault is not applied, with that reason, the answer passes
byte for byte, and the proxy's peak memory grows by less than the cap's worth over its own baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hardening.child import proxy_process
from tests.hardening.hostile import gzip_bomb, hostile_upstream
from tests.support.http import fetch
from tests.support.loops import free_port

BOMB_MIB = 1024
#: What the proxy may grow by while the bomb passes: the decoded cap (16 MiB), with room for the interpreter.
GROWTH_MIB = 128


@pytest.mark.timeout(60)
def test_a_gzip_bomb_under_a_rewriting_fault_passes_unchanged_in_bounded_memory(tmp_path: Path) -> None:
    listen = f"127.0.0.1:{free_port()}"
    with hostile_upstream() as up:
        config = {
            "version": "2.0",
            "proxy": {
                "admin": f"127.0.0.1:{free_port()}",
                "listeners": [{"name": "tools", "listen": listen, "upstream": up}],
            },
            "targets": {"feed": {"listener": "tools", "path": "/bomb*"}},
            "chaos_matrix": [
                {"name": "drift", "tool_faults": [{"tool": "feed", "mode": "schema_drift", "drop": ["price"]}]}
            ],
        }
        with proxy_process(config, tmp_path) as proxy:
            warm = fetch(f"http://{listen}", "/bomb?mib=1")  # the proxy's own baseline, with a body through it
            assert warm.status == 200
            baseline = proxy.peak_rss_mib()
            proxy.control.scenario("drift")
            cell = proxy.control.begin("bomb")
            seen = fetch(f"http://{listen}", f"/bomb?mib={BOMB_MIB}", headers={"x-flakeproxy-cell": cell}, timeout=30)
            (entry,) = proxy.control.end(cell)
            growth = proxy.peak_rss_mib() - baseline
    assert seen.status == 200 and seen.headers.get("content-encoding") == "gzip"
    assert seen.body == gzip_bomb(BOMB_MIB), "the answer passes byte for byte"
    assert growth < GROWTH_MIB, f"the proxy grew by {growth:.0f} MiB for a {BOMB_MIB} MiB bomb"
    fault = entry["fault"]
    assert fault["applied"] is False, fault
    assert "decodes (gzip) to more than 16 MiB" in fault["not_applied_reason"], fault
