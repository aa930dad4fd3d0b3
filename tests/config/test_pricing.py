"""`pricing:`: a model's price by name or the most specific glob, the cost of a call from its usage, the dated
default table."""

from __future__ import annotations

import datetime

import pytest
from pydantic import ValidationError

from flakeproxy.config.default_pricing import DEFAULT_PRICING
from flakeproxy.config.pricing import ModelPrice, PricingTable, cost
from flakeproxy.wire.usage import Usage, unknown


def price(input_usd: float, output_usd: float, **more: float) -> dict[str, float]:
    return {"input_usd_per_mtok": input_usd, "output_usd_per_mtok": output_usd, **more}


TABLE = PricingTable.model_validate(
    {
        "as_of": "2026-11-24",
        "models": {
            "gpt-4o*": price(2.5, 10, cached_input_usd_per_mtok=1.25),
            "gpt-4o-mini*": price(0.15, 0.6),
            "gpt-4o-2024-05-13": price(5, 15),
            "claude-*": price(3, 15, cached_input_usd_per_mtok=0.3, cache_write_usd_per_mtok=3.75),
            "gemini-2.5-flash": price(0.3, 2.5, cached_input_usd_per_mtok=0.03),
        },
    }
)


@pytest.mark.parametrize(
    ("model", "entry"),
    [
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini*"),  # the more specific glob wins, whatever the order
        ("gpt-4o-2024-08-06", "gpt-4o*"),
        ("gpt-4o-2024-05-13", "gpt-4o-2024-05-13"),  # an exact name first
        ("GPT-4o", "gpt-4o*"),  # without case
        ("openai/gpt-4o-mini", "gpt-4o-mini*"),  # a router's prefix
        ("models/gemini-2.5-flash", "gemini-2.5-flash"),
        ("claude-sonnet-4-6", "claude-*"),
        ("gemini-2.5-flash-lite", None),
        ("o3", None),
        (None, None),
    ],
)
def test_which_entry_prices_a_model(model: str | None, entry: str | None) -> None:
    found = TABLE.price(model)
    assert (found[0] if found else None) == entry


@pytest.mark.parametrize(
    ("usage", "model", "usd"),
    [
        (Usage(input_tokens=1_000_000, output_tokens=1_000_000), "gpt-4o", 12.5),
        # cached input at its own price: 200k fresh at 2.5, 800k cached at 1.25, 100k out at 10
        (Usage(input_tokens=1_000_000, output_tokens=100_000, cached_tokens=800_000), "gpt-4o", 0.5 + 1.0 + 1.0),
        # no cached price: cached input costs the input price
        (Usage(input_tokens=1_000_000, output_tokens=0, cached_tokens=500_000), "gpt-4o-mini", 0.15),
        # Anthropic: 21 fresh, 188 written to the cache, 2048 read from it, 393 out
        (
            Usage(input_tokens=2257, output_tokens=393, cached_tokens=2048, cache_write_tokens=188),
            "claude-sonnet-4-6",
            (21 * 3 + 188 * 3.75 + 2048 * 0.3 + 393 * 15) / 1e6,
        ),
        # the model the answer names, when the caller passes none
        (Usage(input_tokens=1_000_000, output_tokens=0, model="gemini-2.5-flash"), None, 0.3),
        (Usage(input_tokens=0, output_tokens=0, reason="HTTP 429: an error reply is not billed"), None, 0.0),
        (Usage(input_tokens=10, output_tokens=10), "o3", None),  # no price
        (Usage(input_tokens=10, output_tokens=10), None, None),  # no model at all
        (unknown("the stream was cut before [DONE] and reported no usage"), "gpt-4o", None),
        (unknown("cut before message_delta", input_tokens=2257), "claude-sonnet-4-6", None),
    ],
)
def test_cost_of_a_call(usage: Usage, model: str | None, usd: float | None) -> None:
    got = cost(usage, model, TABLE)
    assert got == (None if usd is None else pytest.approx(usd))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"models": {"x": {"input_usd_per_mtok": 1}}}, "output_usd_per_mtok\n  Field required"),
        ({"models": {"x": price(-1, 1)}}, "greater than or equal to 0"),
        ({"models": {"x": {**price(1, 1), "input": 1}}}, "Extra inputs are not permitted"),
        ({"as_of": "last week"}, "as_of\n  Input should be a valid date"),
    ],
)
def test_a_bad_table_says_what_is_wrong(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        PricingTable.model_validate(data)


def test_the_default_table_is_dated_and_prices_the_usual_models() -> None:
    assert DEFAULT_PRICING.as_of == datetime.date(2026, 11, 24)
    assert DEFAULT_PRICING.source and "checked 2026-11-24" in DEFAULT_PRICING.source
    assert DEFAULT_PRICING.age_days(datetime.date(2027, 2, 22)) == 90
    for model, entry in [
        ("gpt-4o-2024-08-06", "gpt-4o-20*"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini-20*"),
        ("gpt-4.1-mini", "gpt-4.1-mini"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5-20*"),
        ("gemini-2.0-flash-001", "gemini-2.0-flash-0*"),
        ("gemini-2.5-flash-lite", "gemini-2.5-flash-lite"),
    ]:
        found = DEFAULT_PRICING.price(model)
        assert found is not None and found[0] == entry, model
    assert DEFAULT_PRICING.price("gpt-5-pro") is None  # not priced as gpt-5: a wrong price is worse than none
    assert DEFAULT_PRICING.price("claude-sonnet-4-5") is None  # priced by prompt length: left out
    assert PricingTable.model_validate(DEFAULT_PRICING.model_dump(mode="json")) == DEFAULT_PRICING
    assert isinstance(DEFAULT_PRICING.models["o3"], ModelPrice)
