"""Journal entries as the proxy records them, for the spend checks: LLM calls with `usage` (the JSON of
flakeproxy.wire.usage.Usage), tool calls without."""

from __future__ import annotations

import json
from typing import Any

from flakeproxy.config.pricing import PricingTable
from flakeproxy.judging.verdict import Observation
from flakeproxy.wire.usage import Usage, unknown

PRICING = PricingTable.model_validate({"models": {"gpt-4o*": {"input_usd_per_mtok": 2.5, "output_usd_per_mtok": 10.0}}})


def llm(seq: int, input_tokens: int, output_tokens: int, model: str | None = "gpt-4o-2024-08-06") -> dict[str, Any]:
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, model=model)
    return _llm(seq, usage)


def llm_unknown(
    seq: int, reason: str = "the stream was cut before [DONE] and reported no usage", input_tokens: int | None = None
) -> dict[str, Any]:
    return _llm(seq, unknown(reason, input_tokens=input_tokens, model="gpt-4o-2024-08-06"))


def llm_error(seq: int, status: int = 429) -> dict[str, Any]:
    return _llm(seq, Usage(input_tokens=0, output_tokens=0, reason=f"HTTP {status}: an error reply is not billed"))


def _llm(seq: int, usage: Usage) -> dict[str, Any]:
    entry = _entry(seq, "llm", "POST", "http://127.0.0.1:8701/v1/chat/completions", '{"model": "gpt-4o"}')
    return {**entry, "usage": usage.to_json()}


def tool(seq: int, target: str = "quotes", body: str = "", method: str = "GET", url: str = "") -> dict[str, Any]:
    return _entry(seq, target, method, url or f"http://127.0.0.1:8702/v1/{target}?symbol=AAPL", body)


def mcp(seq: int, name: str, arguments: dict[str, Any], rid: int) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return _entry(seq, name, "POST", "http://127.0.0.1:8703/mcp", json.dumps(body))


def _entry(seq: int, target: str, method: str, url: str, body: str) -> dict[str, Any]:
    return {
        "seq": seq,
        "started_at": 1000.0 + seq,
        "targets": [target],
        "method": method,
        "url": url,
        "request_body": body,
        "status": 200,
    }


def observe(journal: list[dict[str, Any]], **more: Any) -> Observation:
    return Observation(prompt="What is AAPL trading at?", text="AAPL is at $189.50.", latency_ms=100.0,
                       journal=journal, **more)  # fmt: skip
