"""What an episode spent, read from its journal: LLM calls, tool calls, tokens and cost.

An entry is an LLM call when it carries `usage` (flakeproxy.wire.usage.Usage as JSON: the proxy records it for
every request to a target with an `api:`); every other entry that hit a target is a tool call. A sum over calls
whose usage is unknown is unknown too, but what the known calls add up to is a lower bound: a budget that this
already exceeds has failed, whatever the rest was.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from flakeproxy.config.pricing import PricingTable, cost
from flakeproxy.wire.usage import Usage

Entry = dict[str, Any]
TokenKind = Literal["input", "output", "total"]


def is_llm_call(entry: Entry) -> bool:
    return entry.get("usage") is not None


def usage_of(entry: Entry) -> Usage:
    return Usage.model_validate(entry["usage"])


def llm_calls(journal: Iterable[Entry]) -> list[Entry]:
    return sorted((e for e in journal if is_llm_call(e)), key=_order)


def tool_calls(journal: Iterable[Entry], targets: list[str] | None = None) -> dict[str, list[Entry]]:
    """The tool calls per target (those matching a glob of `targets`, or all), in the order the proxy saw them."""
    out: dict[str, list[Entry]] = {}
    for entry in sorted(journal, key=_order):
        if is_llm_call(entry):
            continue
        for target in entry.get("targets", []):
            if targets is None or any(fnmatch.fnmatchcase(target, g) for g in targets):
                out.setdefault(target, []).append(entry)
    return out


def _order(entry: Entry) -> tuple[int, float]:
    return entry.get("seq", 0), entry.get("started_at", 0.0)


def plural(n: float, noun: str) -> str:
    """`1 LLM call`, `3 LLM calls`."""
    return f"{n:g} {noun}" + ("" if n == 1 else "s")


def describe(entry: Entry) -> str:
    """A call as a reason names it: its sequence number, method and URL."""
    return f"call #{entry.get('seq', '?')} ({entry.get('method', '?')} {entry.get('url', '?')})"


@dataclass(frozen=True)
class Tally:
    """A sum over an episode's LLM calls: `known` adds up the calls that could be counted; the sum is exact
    only when `unknown` (why a call could not be counted) and `unpriced` (models without a price) are empty."""

    known: float = 0.0
    calls: int = 0
    unknown: list[str] = field(default_factory=list)
    unpriced: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return not self.unknown and not self.unpriced


def _tokens(usage: Usage, kind: TokenKind) -> int | None:
    return {"input": usage.input_tokens, "output": usage.output_tokens, "total": usage.total_tokens}[kind]


def tokens(journal: Iterable[Entry], kind: TokenKind = "total") -> Tally:
    """The episode's input, output or total tokens over its LLM calls."""
    total, calls, unknown = 0, 0, []
    for entry in llm_calls(journal):
        calls += 1
        count = _tokens(usage_of(entry), kind)
        if count is None:
            unknown.append(f"{describe(entry)}: {usage_of(entry).reason}")
        else:
            total += count
    return Tally(total, calls, unknown)


def spend_usd(journal: Iterable[Entry], pricing: PricingTable) -> Tally:
    """The episode's cost in USD over its LLM calls, each priced by the model its answer names (Usage.model)."""
    total, calls, unknown, unpriced = 0.0, 0, [], []
    for entry in llm_calls(journal):
        calls += 1
        usage = usage_of(entry)
        usd = cost(usage, None, pricing)
        if usd is not None:
            total += usd
        elif usage.unknown:
            unknown.append(f"{describe(entry)}: {usage.reason}")
        else:
            unpriced.append(usage.model or "(an answer that names no model)")
    return Tally(total, calls, unknown, sorted(set(unpriced)))
