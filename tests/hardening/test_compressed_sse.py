"""Stream faults apply to compressed SSE (issue 21 item 6): a gzip or br stream is decoded, the fault applied to
its events, and what goes to the agent encoded again, event by event; a zstd stream, which flakeproxy does not
re-encode, passes unchanged and the fault says "compressed stream: ...". Before, every compressed stream passed
unchanged with "nothing to rewrite". The client is the official openai SDK (httpx decodes gzip, br and zstd),
the upstream streams 20 ms apart."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

openai = pytest.importorskip("openai", reason="the SDKs install beside mitmproxy 12 on Python 3.13+ only")

from tests.hardening.hostile import WORDS, hostile_upstream  # noqa: E402
from tests.support.proxy import Proxy, config_for, running_proxy  # noqa: E402

MATRIX = [
    {"name": "cut", "llm_faults": [{"mode": "stream_cut", "after_events": 3}]},
    {"name": "tone", "llm_faults": [{"mode": "response_drift", "drift_type": "tone_shift"}]},
]
MESSAGES: Any = [{"role": "user", "content": "What is AAPL trading at?"}]


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    targets = {"llm": {"listener": "llm", "api": "openai"}}
    with hostile_upstream() as up, running_proxy(config_for({"llm": up}, targets, {"chaos_matrix": MATRIX})) as p:
        yield p


def stream(proxy: Proxy, scenario: str, encoding: str) -> tuple[str, dict[str, Any]]:
    """The text the SDK assembled from a streamed answer, and the journal entry of that call."""
    cell = proxy.control.ok("POST", "/episodes", {"label": f"{scenario} {encoding}", "scenario": scenario})["id"]
    client = openai.OpenAI(base_url=proxy.listeners["llm"] + "/v1", api_key="sk-test", max_retries=0, timeout=20)
    try:
        chunks = client.chat.completions.create(
            model="m",
            messages=MESSAGES,
            stream=True,
            extra_query={"enc": encoding},
            extra_headers={"x-flakeproxy-cell": cell},
        )
        text = "".join(c.delta.content or "" for chunk in chunks for c in chunk.choices)
    finally:
        client.close()
    (entry,) = proxy.control.end(cell)
    return text, entry


@pytest.mark.timeout(30)
@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_a_cut_reaches_the_agent_through_a_compressed_stream(proxy: Proxy, encoding: str) -> None:
    text, entry = stream(proxy, "cut", encoding)
    assert text == "".join(WORDS[:2]), "the first 3 events (the role, then two words), then a clean end"
    assert entry["response_headers"]["content-encoding"] == encoding
    assert entry["fault"]["applied"] is True and "stream ended after 3 events" in entry["fault"]["effect"], entry
    assert entry["response_body"].startswith("data: {"), "the journal shows the decoded events"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_a_rewrite_reaches_the_agent_through_a_compressed_stream(proxy: Proxy, encoding: str) -> None:
    text, entry = stream(proxy, "tone", encoding)
    assert text.startswith("lol The quote"), text
    assert entry["fault"]["applied"] is True and entry["fault"]["effect"] == "stream rewritten", entry


@pytest.mark.timeout(30)
def test_a_stream_it_cannot_re_encode_passes_unchanged_and_says_why(proxy: Proxy) -> None:
    """httpx, not the SDK: the openai SDK's client (httpx2) does not decode zstd, with or without a proxy."""
    cell = proxy.control.ok("POST", "/episodes", {"label": "zstd", "scenario": "cut"})["id"]
    url, headers = proxy.listeners["llm"] + "/v1/chat/completions?enc=zstd", {"x-flakeproxy-cell": cell}
    with httpx.stream("POST", url, json={"model": "m", "stream": True}, headers=headers, timeout=20) as response:
        events = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: {")]
    (entry,) = proxy.control.end(cell)
    assert "".join(e["choices"][0]["delta"].get("content", "") for e in events) == "".join(WORDS)
    assert entry["fault"]["applied"] is False
    assert entry["fault"]["not_applied_reason"].startswith("compressed stream: zstd streams are not"), entry
