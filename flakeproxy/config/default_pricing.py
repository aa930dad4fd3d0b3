"""The default `pricing:` table: a few common models' list prices, dated. CHECK THEM before trusting a cost:
prices change, and a model missing here has no cost (its cost checks are ERROR until you price it).

Copied on 2026-11-24 from the data of genai-prices 0.2.3 (github.com/pydantic/genai-prices, which follows
openai.com/api/pricing, anthropic.com/pricing#api and ai.google.dev/gemini-api/docs/pricing), standard tier,
no batch discount. Models whose price depends on the prompt's length (tiers above 200k tokens) are left out.
Each model is priced under its name and its dated snapshots (`gpt-4o-2024-08-06`, `claude-haiku-4-5-20251001`,
`gemini-2.0-flash-001`).
"""

from __future__ import annotations

import datetime

from flakeproxy.config.pricing import ModelPrice, PricingTable

AS_OF = datetime.date(2026, 11, 24)
SOURCE = "genai-prices 0.2.3 data (github.com/pydantic/genai-prices), checked 2026-11-24"

# name: (input, output, cached input, cache write) in USD per million tokens; None = the input price
_PRICES: dict[str, tuple[float, float, float | None, float | None]] = {
    "gpt-4o": (2.50, 10.00, 1.25, None),
    "gpt-4o-mini": (0.15, 0.60, 0.075, None),
    "gpt-4.1": (2.00, 8.00, 0.50, None),
    "gpt-4.1-mini": (0.40, 1.60, 0.10, None),
    "gpt-4.1-nano": (0.10, 0.40, 0.025, None),
    "gpt-5": (1.25, 10.00, 0.125, None),
    "gpt-5-mini": (0.25, 2.00, 0.025, None),
    "gpt-5-nano": (0.05, 0.40, 0.005, None),
    "gpt-5.1": (1.25, 10.00, 0.125, None),
    "gpt-5.2": (1.75, 14.00, 0.175, None),
    "gpt-5.4-mini": (0.75, 4.50, 0.075, None),
    "gpt-5.4-nano": (0.20, 1.25, 0.02, None),
    "o3": (2.00, 8.00, 0.50, None),
    "o4-mini": (1.10, 4.40, 0.275, None),
    "claude-haiku-4-5": (1.00, 5.00, 0.10, 1.25),
    "claude-sonnet-4-6": (3.00, 15.00, 0.30, 3.75),
    "claude-opus-4-5": (5.00, 25.00, 0.50, 6.25),
    "claude-opus-4-6": (5.00, 25.00, 0.50, 6.25),
    "claude-sonnet-5": (2.00, 10.00, 0.20, 2.50),
    "claude-opus-5": (5.00, 25.00, 0.50, 6.25),
    "gemini-2.0-flash": (0.10, 0.40, 0.025, None),
    "gemini-2.5-flash": (0.30, 2.50, 0.03, None),
    "gemini-2.5-flash-lite": (0.10, 0.40, 0.01, None),
    "gemini-3-flash-preview": (0.50, 3.00, 0.05, None),
    "gemini-3.1-flash-lite": (0.25, 1.50, 0.025, None),
}


def _snapshots(name: str) -> str:
    """The glob of a model's dated snapshots: OpenAI and Anthropic append a date, Google a version number."""
    return f"{name}-0*" if name.startswith("gemini-") else f"{name}-20*"


def _table() -> PricingTable:
    models: dict[str, ModelPrice] = {}
    for name, (given, made, cached, written) in _PRICES.items():
        price = ModelPrice(
            input_usd_per_mtok=given,
            output_usd_per_mtok=made,
            cached_input_usd_per_mtok=cached,
            cache_write_usd_per_mtok=written,
        )
        models[name] = models[_snapshots(name)] = price
    return PricingTable(as_of=AS_OF, source=SOURCE, models=models)


DEFAULT_PRICING = _table()


def effective_pricing(table: PricingTable | None) -> PricingTable:
    """The prices a run uses: the config's `pricing:` over the default table, or the default table alone."""
    return DEFAULT_PRICING if table is None else table.over(DEFAULT_PRICING)
