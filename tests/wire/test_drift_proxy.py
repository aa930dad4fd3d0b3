"""response_drift through the real proxy on real SSE streams: the answer drifts once, not per delta."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.http import fetch
from tests.support.llm_read import read
from tests.support.proxy import Proxy, config_for, running_proxy
from tests.support.upstream import ANSWER, RunningUpstream

PATHS = {"openai": "/v1/chat/completions", "openai-responses": "/v1/responses", "anthropic": "/v1/messages"}
TARGETS = {api.replace("-", "_"): {"listener": "llm", "path": path, "api": api} for api, path in PATHS.items()}


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    with RunningUpstream() as up, running_proxy(config_for({"llm": up.url}, TARGETS)) as running:
        yield running


def streamed(proxy: Proxy, api: str, fault: dict[str, Any]) -> str:
    proxy.control.scenario("drift", llm_faults=[fault])
    body: dict[str, Any] = {"model": "m", "stream": True, "max_tokens": 100}
    body["input" if api == "openai-responses" else "messages"] = [{"role": "user", "content": "AAPL?"}]
    cell = proxy.control.begin()
    seen = fetch(
        proxy.listeners["llm"], PATHS[api], "POST", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    proxy.control.end(cell)
    answer = read(api, seen)
    assert seen.status == 200 and answer.terminal, seen
    return answer.text


@pytest.mark.parametrize("api", list(PATHS))
def test_tone_shift_drifts_a_real_stream_once(proxy: Proxy, api: str) -> None:
    assert streamed(proxy, api, {"mode": "response_drift", "drift_type": "tone_shift"}) == "lol " + ANSWER


@pytest.mark.parametrize("api", list(PATHS))
def test_compress_shortens_a_real_stream(proxy: Proxy, api: str) -> None:
    fault = {"mode": "response_drift", "drift_type": "verbosity_shift", "direction": "compress", "stream_words": 3}
    assert streamed(proxy, api, fault).split() == ANSWER.split()[:3]
