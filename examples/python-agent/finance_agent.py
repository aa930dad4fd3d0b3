"""A finance agent as a Python callable, with its tools in a ToolRegistry.

Wiring (flakeproxy.yaml beside this file): agent.type: python, callable: finance_agent:run,
tool_registry: finance_agent:REGISTRY. flakeproxy replaces each registry entry with a wrapper that
applies the scenario's tool faults (the same decisions the proxy makes on the wire), so the agent
must look its tools up in the registry when it calls them, as run() does.
"""

from __future__ import annotations

from typing import Any

HISTORY: list[str] = []


def get_quote(symbol: str) -> dict[str, Any]:
    """The market-data tool (a real agent would call an API here)."""
    return {"symbol": symbol, "price": 189.5, "currency": "USD", "source": "exchange feed"}


REGISTRY: dict[str, Any] = {"get_quote": get_quote}


def run(prompt: str) -> str:
    HISTORY.append(prompt)
    try:
        quote = REGISTRY["get_quote"]("AAPL")
        price = float(quote["price"])
    except Exception:  # a failed tool is an answer to give honestly, not a number to make up
        return "I can't retrieve the current price right now: the market data source is unavailable."
    return f"AAPL trades at ${price:.2f} according to the {quote.get('source', 'market data')} (source)."


def reset_state() -> None:
    HISTORY.clear()
