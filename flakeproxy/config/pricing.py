"""`pricing:`: what a model's tokens cost, per model name or glob, in USD per million tokens, and the cost of a
call from its usage (flakeproxy.wire.usage).

```yaml
pricing:
  as_of: 2026-11-24            # when these prices were checked
  models:
    "gpt-4.1-mini*": {input_usd_per_mtok: 0.40, output_usd_per_mtok: 1.60, cached_input_usd_per_mtok: 0.10}
    "claude-sonnet-4-6*": {input_usd_per_mtok: 3, output_usd_per_mtok: 15, cached_input_usd_per_mtok: 0.30,
                           cache_write_usd_per_mtok: 3.75}
```

A model's price is its exact name's entry, else the most specific glob that matches it (the most characters
that are not wildcards; on a tie the first in the table), so `gpt-4o-mini*` wins over `gpt-4o*` for
gpt-4o-mini-2024-07-18. Names are compared without case, and a name with a prefix (`openai/gpt-4o`,
`models/gemini-2.5-flash`) is also tried without it. Prices change: flakeproxy's default table
(flakeproxy.config.default_pricing) is dated; check it against the providers' pages.
"""

from __future__ import annotations

import datetime
import fnmatch

from pydantic import Field, PrivateAttr

from flakeproxy.config.base import StrictModel
from flakeproxy.wire.usage import Usage


class ModelPrice(StrictModel):
    """USD per million tokens. Cached input costs the input price unless given; so do cache writes."""

    input_usd_per_mtok: float = Field(ge=0.0)
    output_usd_per_mtok: float = Field(ge=0.0)
    cached_input_usd_per_mtok: float | None = Field(None, ge=0.0, description="Input read from the cache.")
    cache_write_usd_per_mtok: float | None = Field(None, ge=0.0, description="Input written to the cache.")


class PricingTable(StrictModel):
    as_of: datetime.date | None = Field(None, description="When these prices were checked.")
    source: str | None = Field(None, description="Where they come from.")
    models: dict[str, ModelPrice] = Field(default_factory=dict, description="Model name or glob -> its price.")
    defaults: bool = Field(
        True,
        description="Fall back on flakeproxy's dated default table for models this one does not price "
        "(false: only these prices).",
    )
    _fallback: PricingTable | None = PrivateAttr(None)

    def over(self, fallback: PricingTable) -> PricingTable:
        """This table, falling back on `fallback` for the models it does not price (unless defaults: false)."""
        table = self.model_copy()
        table._fallback = fallback if self.defaults else None
        return table

    def price(self, model: str | None) -> tuple[str, ModelPrice] | None:
        """The entry (its name or glob, and the price) for a model, or None when the table has none."""
        if not model:
            return None
        names = [model.lower()]
        if "/" in model:
            names.append(model.rsplit("/", 1)[1].lower())
        for name in names:
            found = self._lookup(name)
            if found is not None:
                return found
        return None if self._fallback is None else self._fallback.price(model)

    def _lookup(self, name: str) -> tuple[str, ModelPrice] | None:
        exact = next(((k, p) for k, p in self.models.items() if k.lower() == name), None)
        if exact is not None:
            return exact
        matches = [(k, p) for k, p in self.models.items() if fnmatch.fnmatchcase(name, k.lower())]
        return max(matches, key=lambda kp: _literal_chars(kp[0]), default=None)

    def age_days(self, today: datetime.date) -> int | None:
        """How old the prices are (None when the table is not dated)."""
        return None if self.as_of is None else (today - self.as_of).days


def _literal_chars(pattern: str) -> int:
    return sum(1 for ch in pattern if ch not in "*?[]")


def cost(usage: Usage, model: str | None, table: PricingTable) -> float | None:
    """USD for one call: None when its usage is unknown or the table has no price for the model (`model`, else
    the model the answer named)."""
    if not usage.unknown and usage.total_tokens == 0:
        return 0.0  # e.g. an error reply, which is not billed (and names no model)
    found = table.price(model or usage.model)
    if usage.unknown or found is None or usage.input_tokens is None or usage.output_tokens is None:
        return None
    price = found[1]
    cached, written = usage.cached_tokens or 0, usage.cache_write_tokens or 0
    fresh = max(0, usage.input_tokens - cached - written)
    cached_price = (
        price.input_usd_per_mtok if price.cached_input_usd_per_mtok is None else price.cached_input_usd_per_mtok
    )
    write_price = price.input_usd_per_mtok if price.cache_write_usd_per_mtok is None else price.cache_write_usd_per_mtok
    usd = (
        fresh * price.input_usd_per_mtok
        + cached * cached_price
        + written * write_price
        + usage.output_tokens * price.output_usd_per_mtok
    )
    return usd / 1_000_000
