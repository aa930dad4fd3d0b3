"""What each scenario spent (results.json `spend`, issue 25) as the reports show it: LLM calls, tool calls,
tokens, cost and the amplification over calm, as cells the terminal, Markdown and JUnit renderings share.

A sum with calls of unknown usage is a lower bound, shown with a trailing `+`; an amplification that cannot be
counted (no calm run, unknown usage, no price) is `-`."""

from __future__ import annotations

from typing import Any

from flakeproxy.results import RunResult
from flakeproxy.results_spend import ScenarioSpend, Spend

HEADER = ("scenario", "episodes", "LLM calls", "tool calls", "tokens in", "tokens out", "cached", "cost", "x calm")


def shown(result: RunResult) -> list[ScenarioSpend]:
    """The scenarios' spend rows, when the run made an LLM or tool call, in a scenario or in none (requests no
    episode could be tied to); else there is nothing to show."""
    if not any(s.total.llm_calls or s.total.tool_calls for s in result.spend) and result.spend_unattributed is None:
        return []
    return result.spend


WHOLE_RUN = "whole run"


def rows(result: RunResult) -> list[list[str]]:
    """The table's rows: each scenario's, then the whole run's (every episode, what run.budget counts)."""
    scenarios = shown(result)
    if not scenarios:
        return []
    out = [cells(r) for r in scenarios]
    if result.spend_total is not None:
        episodes = sum(1 for e in result.episodes if e.spend is not None) or len(result.episodes)
        pillars = sorted({e.purpose for e in result.episodes if e.purpose in ("mutation", "chaos", "replay")})
        name = (
            f"{WHOLE_RUN} (and the {', '.join(pillars)} pillar{'s' if len(pillars) > 1 else ''})"
            if pillars
            else WHOLE_RUN
        )
        whole = cells(ScenarioSpend(scenario=name, episodes=episodes, total=result.spend_total))[:-1]
        if (loose := result.spend_unattributed) is not None:  # counted in the run's, in no scenario's
            whole[2] += f" ({loose.llm_calls} unattributed)" if loose.llm_calls else ""
            whole[3] += f" ({loose.tool_call_count} unattributed)" if loose.tool_call_count else ""
        out.append([*whole, ""])
    return out


def lower_bound(spend: Spend) -> str:
    return "+" if spend.unknown_calls else ""


def usd(spend: Spend) -> str:
    return f"${spend.cost_usd:.4f}" + ("" if spend.exact else "+")


def factor(value: float | None) -> str:
    return "-" if value is None else f"{value:g}x"


def amplification(row: ScenarioSpend) -> str:
    """`tokens 4.36x, calls 3x, cost 4.2x` (the calm scenario: `calm`)."""
    if row.calm:
        return "calm"
    a = row.amplification
    return f"tokens {factor(a.get('tokens'))}, calls {factor(a.get('llm_calls'))}, cost {factor(a.get('cost'))}"


def cells(row: ScenarioSpend) -> list[str]:
    total = row.total
    return [
        row.scenario,
        str(row.episodes),
        str(total.llm_calls),
        str(total.tool_call_count),
        f"{total.input_tokens}{lower_bound(total)}",
        f"{total.output_tokens}{lower_bound(total)}",
        str(total.cached_tokens),
        usd(total),
        amplification(row),
    ]


def terminal_lines(result: RunResult) -> list[str]:
    """An aligned table of the scenarios' spend, with the prices' date under it."""
    table = [list(HEADER), *rows(result)]
    if len(table) == 1:
        return []
    widths = [max(len(r[i]) for r in table) for i in range(len(HEADER))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table]
    note = f"spend: usage as the providers reported it; prices as of {result.pricing_as_of or 'unknown'}"
    return [*lines, note + "".join(f"; {c}" for c in caveats(result)), ""]


def unpriced(result: RunResult) -> list[str]:
    """The models the run called that have no price (their cost counts as 0: a cost marked + is too low)."""
    loose = result.spend_unattributed.unpriced_models if result.spend_unattributed else []
    return sorted({m for r in shown(result) for m in r.total.unpriced_models} | set(loose))


def caveats(result: RunResult) -> list[str]:
    """Why some sums are lower bounds: calls of unknown usage, models without a price."""
    out = []
    loose = result.spend_unattributed
    if loose is not None:
        calls = f"{loose.llm_calls} LLM call(s) and {loose.tool_call_count} tool call(s)"
        out.append(
            f"{calls} no episode could be tied to count in the whole run's row, in no scenario's (which one made "
            "them cannot be told: results.json unattributed_journal)"
        )
    # the whole run's, as its row shows it (calm baselines, the stateful check and the pillars too: a trial's note
    # said 18 under a row of 20), else the scenario rows' and the unattributed
    whole = result.spend_total
    unknown = (
        whole.unknown_calls
        if whole is not None
        else (sum(r.total.unknown_calls for r in shown(result)) + (loose.unknown_calls if loose else 0))
    )
    if unknown:
        out.append(f"{unknown} LLM call(s) of unknown usage: sums marked + are lower bounds")
    if models := unpriced(result):
        out.append(f"no price for {', '.join(models)}: costs marked + leave them out (add them under pricing:)")
    return out


def junit_properties(result: RunResult, scenario: str) -> list[tuple[str, Any]]:
    """The scenario's spend as JUnit properties (spend.*), when it has any."""
    row = next((r for r in shown(result) if r.scenario == scenario), None)
    if row is None:
        return []
    total = row.total
    values: list[tuple[str, Any]] = [
        ("spend.llm_calls", total.llm_calls),
        *((f"spend.tool_calls.{target}", n) for target, n in sorted(total.tool_calls.items())),
        ("spend.input_tokens", total.input_tokens),
        ("spend.output_tokens", total.output_tokens),
        ("spend.cached_tokens", total.cached_tokens),
        ("spend.cost_usd", f"{total.cost_usd:.6f}"),
        ("spend.unknown_usage_calls", total.unknown_calls),
        ("spend.pricing_as_of", result.pricing_as_of or "unknown"),
    ]
    for measure in ("tokens", "llm_calls", "tool_calls", "cost"):
        value = row.amplification.get(measure)
        values.append((f"amplification.{measure}", "unknown" if value is None else f"{value:g}"))
    return values
