"""Stream faults at a real token pace, with clients that keep their connections alive (as SDK clients do): the
fault counts the moment the agent's stream ends, so the cell's journal says applied even when it is read right
after the agent finished, before the upstream sends its next event. At pace 0 and 25 ms, one at a time and four
at once, several times each."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.upstream import RunningUpstream

CHAT = "/v1/chat/completions"
TARGETS = {"chat": {"listener": "llm", "path": CHAT, "api": "openai"}}
MODES = ["stream_cut", "mid_stream_error", "stream_reset", "truncated_response"]
PACES = {"pace-0": 0.0, "pace-25ms": 0.025}
REPEATS = 3


@pytest.fixture(scope="module", params=list(PACES))
def proxy(request: pytest.FixtureRequest) -> Iterator[Proxy]:
    with (
        RunningUpstream(event_gap_s=PACES[request.param]) as up,
        running_proxy(config_for({"llm": up.url}, TARGETS)) as running,
    ):
        yield running


def fault(mode: str) -> dict[str, Any]:
    return {"mode": mode, "max_tokens": 3} if mode == "truncated_response" else {"mode": mode, "after_events": 4}


def episode(proxy: Proxy, client: httpx.Client, mode: str) -> dict[str, Any]:
    """One agent call on a kept-alive connection, its cell ended as soon as the agent has read what it got."""
    cell = proxy.control.call("POST", "/episodes", {"scenario": {"name": mode, "llm_faults": [fault(mode)]}})[1]["id"]
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "AAPL?"}]}
    try:
        with client.stream("POST", CHAT, json=body, headers={"x-flakeproxy-cell": cell}) as response:
            for _ in response.iter_bytes():
                pass
    except httpx.RemoteProtocolError:
        assert mode == "stream_reset"  # the cut connection, as the agent sees it
    ended = proxy.control.ok("POST", f"/episodes/{cell}/end")
    [entry] = ended["journal"]
    return {"fault": entry["fault"], "unsettled": ended["unsettled"]}


@pytest.mark.timeout(90)
@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("mode", MODES)
def test_a_stream_fault_is_applied_in_every_episode(proxy: Proxy, mode: str, concurrency: int) -> None:
    clients = [httpx.Client(base_url=proxy.listeners["llm"], timeout=10) for _ in range(concurrency)]
    try:
        with ThreadPoolExecutor(concurrency) as pool:
            runs = list(
                pool.map(lambda k: [episode(proxy, clients[k], mode) for _ in range(REPEATS)], range(concurrency))
            )
    finally:
        for client in clients:
            client.close()
    records = [r for per_client in runs for r in per_client]
    assert len(records) == REPEATS * concurrency
    for record in records:
        f = record["fault"]
        assert (f["applied"], f["settled"], record["unsettled"]) == (True, True, []), json.dumps(record)
