"""What each episode and scenario spent (flakeproxy.results_spend), from the usage in their journals.

Costs are kept as computed, never rounded here: a micro-dollar run's "x calm" and run.budget are worked out
from the true costs; the reports round them when they show them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.config.default_pricing import DEFAULT_PRICING, effective_pricing
from flakeproxy.config.pricing import PricingTable
from flakeproxy.invariants.spend import llm_calls, spend_usd, tokens, tool_calls, usage_of
from flakeproxy.planning.plan import is_calm
from flakeproxy.results import Episode
from flakeproxy.results_spend import MEASURES, ScenarioSpend, Spend


def episode_spend(journal: list[dict[str, Any]], pricing: PricingTable) -> Spend:
    calls, by_target = llm_calls(journal), tool_calls(journal)
    given, made, usd = tokens(calls, "input"), tokens(calls, "output"), spend_usd(calls, pricing)
    return Spend(
        llm_calls=len(calls),
        tool_calls={target: len(entries) for target, entries in by_target.items()},
        tool_requests=len({id(e) for entries in by_target.values() for e in entries}),
        input_tokens=int(given.known),
        output_tokens=int(made.known),
        cached_tokens=sum(usage_of(e).cached_tokens or 0 for e in calls),
        cost_usd=usd.known,
        unknown_calls=sum(1 for e in calls if usage_of(e).unknown),
        unpriced_models=usd.unpriced,
    )


def added(spends: Iterable[Spend]) -> Spend:
    total = Spend()
    targets: dict[str, int] = {}
    unpriced: set[str] = set()
    for s in spends:
        for target, n in s.tool_calls.items():
            targets[target] = targets.get(target, 0) + n
        unpriced.update(s.unpriced_models)
        total = total.model_copy(
            update={
                "llm_calls": total.llm_calls + s.llm_calls,
                "input_tokens": total.input_tokens + s.input_tokens,
                "output_tokens": total.output_tokens + s.output_tokens,
                "cached_tokens": total.cached_tokens + s.cached_tokens,
                "cost_usd": total.cost_usd + s.cost_usd,
                "unknown_calls": total.unknown_calls + s.unknown_calls,
                "tool_requests": total.tool_call_count + s.tool_call_count,
            }
        )
    return total.model_copy(update={"tool_calls": targets, "unpriced_models": sorted(unpriced)})


def account(episode: Episode, config: FlakeproxyConfig) -> Spend:
    """The episode's spend, kept on it (episode.spend)."""
    episode.spend = episode_spend(episode.journal, effective_pricing(config.pricing))
    return episode.spend


def _spend(episode: Episode, config: FlakeproxyConfig) -> Spend:
    return episode.spend if episode.spend is not None else account(episode, config)


def _calm_means(config: FlakeproxyConfig, episodes: list[Episode], calm: str | None) -> dict[str, dict[str, float]]:
    """Per prompt, the mean of each measure over its calm runs (the calm scenario's, or baseline episodes);
    a prompt whose calm runs cannot count a measure lacks it."""
    runs: dict[str, list[Spend]] = {}
    for e in episodes:
        if (calm is not None and e.scenario == calm) or (e.scenario is None and e.purpose == "baseline"):
            runs.setdefault(e.prompt, []).append(_spend(e, config))
    means: dict[str, dict[str, float]] = {}
    for prompt, spends in runs.items():
        for what in MEASURES:
            values = [s.measure(what) for s in spends]
            if all(v is not None for v in values):
                means.setdefault(prompt, {})[what] = sum(v or 0.0 for v in values) / len(values)
    return means


def _factor(
    mine: list[Episode], means: dict[str, dict[str, float]], what: str, config: FlakeproxyConfig
) -> float | None:
    now = calm = 0.0
    for e in mine:
        value, base = _spend(e, config).measure(what), means.get(e.prompt, {}).get(what)
        if value is None or base is None:
            return None  # unknown is not zero: no factor from a partial count
        now, calm = now + value, calm + base
    return round(now / calm, 3) if calm > 0 else None


def scenario_spend(config: FlakeproxyConfig, episodes: list[Episode]) -> list[ScenarioSpend]:
    """Each scenario of the matrix that ran: its episodes' total spend and its amplification over calm."""
    calm = next((s.name for s in config.matrix if is_calm(s)), None)
    means = _calm_means(config, episodes, calm)
    out = []
    for scenario in config.matrix:
        mine = [e for e in episodes if e.scenario == scenario.name and e.purpose == "matrix"]
        if not mine:
            continue
        factors = {what: _factor(mine, means, what, config) for what in MEASURES}
        total = added(_spend(e, config) for e in mine)
        out.append(
            ScenarioSpend(
                scenario=scenario.name,
                calm=scenario.name == calm,
                episodes=len(mine),
                total=total,
                amplification=factors,
            )
        )
    return out


def loose_spend(config: FlakeproxyConfig, unattributed: Sequence[dict[str, Any]]) -> Spend | None:
    """What the requests no episode could be tied to spent (results.json `unattributed_journal`): this run made
    them, but no scenario can be told. None when they made no LLM or tool call."""
    spent = episode_spend(list(unattributed), effective_pricing(config.pricing))
    return spent if spent.llm_calls or spent.tool_call_count else None


def run_spend(config: FlakeproxyConfig, episodes: list[Episode], unattributed: Sequence[dict[str, Any]] = ()) -> Spend:
    """What the run spent: every episode (the matrix's, calm baselines', the stateful check's) and the requests no
    episode could be tied to (`spend_unattributed`, in no scenario's row)."""
    loose = loose_spend(config, unattributed)
    return added([*(_spend(e, config) for e in episodes), *([loose] if loose is not None else [])])


def pricing_date(config: FlakeproxyConfig) -> str | None:
    """When the prices the costs were computed with were checked (the config's, else the default table's)."""
    table = effective_pricing(config.pricing)
    as_of = table.as_of or (DEFAULT_PRICING.as_of if table.defaults else None)
    return as_of.isoformat() if as_of else None
