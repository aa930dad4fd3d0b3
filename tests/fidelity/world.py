"""The fidelity world: the real-failure upstream, and the proxy over it (a normal upstream when no failure is
planned) with the three LLM targets and one target without an api (the deliberately broken row)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tests.fidelity.real_upstream import RealUpstream, RunningRealUpstream
from tests.support.proxy import Proxy, config_for, running_proxy

TARGETS = {
    "chat": {"listener": "llm", "path": "/v1/chat/completions", "api": "openai"},
    "claude": {"listener": "llm", "path": "/v1/messages", "api": "anthropic"},
    "responses": {"listener": "llm", "path": "/v1/responses", "api": "openai-responses"},
    "gemini": {"listener": "llm", "path": "/v1*/models/*", "api": "gemini"},
    "plain_claude": {"listener": "plain", "path": "/v1/messages"},
}


@contextmanager
def fidelity_world() -> Iterator[tuple[RealUpstream, Proxy]]:
    with RunningRealUpstream() as up, running_proxy(config_for({"llm": up.url, "plain": up.url}, TARGETS)) as proxy:
        yield up, proxy
