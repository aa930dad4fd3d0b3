"""Through the real proxy: the same seed and requests give the same faults; another seed, others."""

from __future__ import annotations

from tests.support.http import fetch
from tests.support.proxy import config_for, running_proxy
from tests.support.upstream import RunningUpstream

FAULT = {"tool": "quotes", "mode": "error", "probability": 0.5}


def test_seeded_faults_replay_exactly() -> None:
    with RunningUpstream() as up, running_proxy(config_for({"tools": up.url}, {"quotes": {"listener": "tools"}})) as p:

        def statuses(seed: int) -> list[int | None]:
            p.control.ok("POST", "/reset")
            p.control.scenario("half", seed=seed, tool_faults=[FAULT])
            cell = p.control.begin()
            seen = [fetch(p.listeners["tools"], "/v1/quotes").status for _ in range(24)]
            journal = p.control.end(cell)
            assert [e["status"] for e in journal] == seen
            assert all(e["fault"]["seed"] for e in journal if e["fault"])
            return seen

        first, again, other = statuses(7), statuses(7), statuses(8)
        assert first == again
        assert first != other
        assert set(first) == {200, 503}
