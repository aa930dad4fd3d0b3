"""The Node side of the framework tests: the official `openai` npm package installed once into a cache
folder (skip, with npm's reason, only when npm cannot install it), and a world to run the agent against."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.frameworks.support import EXAMPLE
from tests.support.loops import free_port, running_app
from tests.support.npm import CACHE_ROOT, npm_packages

CACHE = CACHE_ROOT / "node-openai"
AGENT = Path(__file__).with_name("node_openai_agent.mjs")


def node_agent() -> Path:
    """The agent script beside a node_modules holding openai@6 (ES modules resolve from the script's folder)."""
    script = npm_packages(CACHE.name, "openai@6") / AGENT.name
    shutil.copyfile(AGENT, script)
    return script


def _world_module() -> Any:
    spec = importlib.util.spec_from_file_location("framework_world", EXAMPLE / "world.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def world() -> Iterator[str]:
    """The example's fake OpenAI-compatible LLM and quote API on a free loopback port; yields its URL."""
    w = _world_module()
    routes = [web.post("/v1/chat/completions", w.chat_completions), web.get("/v1/quotes", w.quotes)]
    with running_app(routes, "framework-world") as url:
        yield url


def proxy_section(upstream: str) -> tuple[dict[str, Any], dict[str, str]]:
    """proxy: with an llm and a tools listener on free ports, and the agent's env pointing at them."""
    llm, tools = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    proxy = {
        "admin": f"127.0.0.1:{free_port()}",
        "listeners": [
            {"name": "llm", "listen": llm, "upstream": upstream},
            {"name": "tools", "listen": tools, "upstream": upstream},
        ],
    }
    return proxy, {"LLM_URL": f"http://{llm}/v1", "TOOLS_URL": f"http://{tools}"}
