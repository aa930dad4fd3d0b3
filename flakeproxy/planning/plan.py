"""Plan: the episodes a contract run needs, decided from the config alone (pure; nothing runs here).

run.isolation: episode (the default): one episode per (scenario, prompt, replica) that some applicable
invariant judges; every invariant judges the same episodes. Probes are prompts too, so an invariant with
probes gets episodes of its own. run.isolation: cell: the spec's literal reading, each (invariant x
scenario) cell invokes the agent for each of its prompts. Either way every episode starts from a reset.
"""

from __future__ import annotations

from dataclasses import dataclass

from flakeproxy.config import FlakeproxyConfig, Scenario
from flakeproxy.config.conversation import Conversation, prompt_key, prompt_turns, turn_count
from flakeproxy.invariants.base import Invariant
from flakeproxy.results import Episode, episode_id

STATEFUL_WARNING = (
    "Warning: No reset_endpoint configured. Contract matrix cells may share state. Results may be "
    "contaminated. Add reset_endpoint to your config for accurate isolation."
)


def prompts_of(config: FlakeproxyConfig, invariant: Invariant) -> list[str | Conversation]:
    """The prompts (one-turn strings or conversations) whose episodes this invariant judges."""
    return list(invariant.probes or config.golden_prompts)


def prompt_keys_of(config: FlakeproxyConfig, invariant: Invariant) -> list[str]:
    """The same as an episode's `prompt` names them."""
    return [prompt_key(p) for p in prompts_of(config, invariant)]


def is_calm(scenario: Scenario) -> bool:
    return not scenario.any_chaos_active


@dataclass(frozen=True)
class Plan:
    episodes: list[Episode]
    #: episode ids of the calm answer (scenario, prompt index, replica) a baseline: auto compares with
    baselines: dict[tuple[str, int], str]  # (prompt, replica) -> episode id
    #: two episode ids whose answers show a stateful agent when they differ (only without a reset)
    stateful_check: tuple[str, str] | None


class _Builder:
    def __init__(self, config: FlakeproxyConfig) -> None:
        self.config = config
        self.prompts: list[str] = []  # every distinct prompt, indexed for labels
        self.episodes: list[Episode] = []
        self.index: dict[tuple[str | None, int, int, str | None, str], Episode] = {}

    def prompt_index(self, prompt: str) -> int:
        if prompt not in self.prompts:
            self.prompts.append(prompt)
        return self.prompts.index(prompt)

    def add(
        self,
        scenario: str | None,
        asked: str | Conversation,
        replica: int,
        purpose: str = "matrix",
        invariant: str | None = None,
    ) -> Episode:
        prompt = prompt_key(asked)
        n = self.prompt_index(prompt)
        key = (scenario, n, replica, invariant, purpose)
        if key not in self.index:
            where = scenario if scenario is not None else f"({purpose})"
            label = f"{invariant} x {where}" if invariant else where
            episode = Episode.model_validate(
                {
                    "id": episode_id(len(self.episodes) + 1),
                    "scenario": scenario,
                    "prompt": prompt,
                    "turns": prompt_turns(asked),
                    "prompt_index": n,
                    "replica": replica,
                    "purpose": purpose,
                    "invariant": invariant,
                    "label": f"{label} | p{n} | r{replica}",
                }
            )
            self.index[key] = episode
            self.episodes.append(episode)
        return self.index[key]


def plan_episodes(config: FlakeproxyConfig, has_reset: bool) -> Plan:
    """Every episode the run needs, in the order they run (scenario by scenario)."""
    assert config.contract is not None
    build = _Builder(config)
    cell_mode = config.run.isolation == "cell"
    for scenario in config.matrix:
        for invariant in config.contract.invariants:
            if not invariant.judged_in(scenario):
                continue
            for prompt in prompts_of(config, invariant):
                if not scenario.reaches(turn_count(prompt)):
                    continue  # no fault of it can act on this prompt: a calm run by another name, never paid for
                for replica in range(config.run.max_replicas):
                    build.add(scenario.name, prompt, replica, invariant=invariant.id if cell_mode else None)
    baselines = _baselines(config, build)
    check = _stateful_check(config, build, has_reset)
    return Plan(_run_order(config, build.episodes), baselines, check)


def _run_order(config: FlakeproxyConfig, episodes: list[Episode]) -> list[Episode]:
    """Calm runs outside the matrix first, then the matrix's calm scenario (the baselines), then the rest."""
    calm = next((s.name for s in config.matrix if is_calm(s)), None)
    rank = {s.name: i + 2 for i, s in enumerate(config.matrix)} | ({calm: 1} if calm else {})
    return sorted(episodes, key=lambda e: 0 if e.scenario is None else rank[e.scenario])


def _baselines(config: FlakeproxyConfig, build: _Builder) -> dict[tuple[str, int], str]:
    """behavior_unchanged with baseline: auto compares with a calm answer to the same prompt: the matrix's
    calm scenario when it has one (no extra call), else a baseline episode run without chaos."""
    assert config.contract is not None
    calm = next((s.name for s in config.matrix if is_calm(s)), None)
    out: dict[tuple[str, int], str] = {}
    for invariant in config.contract.invariants:
        if not invariant.uses_baseline or getattr(invariant, "baseline", "auto") != "auto":  # amplification: auto
            continue
        for prompt in prompts_of(config, invariant):
            for replica in range(config.run.max_replicas):
                found = [
                    e
                    for e in build.episodes
                    if e.scenario == calm
                    and e.prompt == prompt_key(prompt)
                    and e.replica == replica
                    and e.purpose == "matrix"
                ]
                episode = found[0] if calm is not None and found else build.add(None, prompt, replica, "baseline")
                out[(prompt_key(prompt), replica)] = episode.id
    return out


def _stateful_check(config: FlakeproxyConfig, build: _Builder, has_reset: bool) -> tuple[str, str] | None:
    """Without a reset: the same prompt twice, calm; different answers mean the agent keeps state."""
    if has_reset or not config.golden_prompts:
        return None
    prompt = config.golden_prompts[0]
    calm = next((s.name for s in config.matrix if is_calm(s)), None)
    first = next(
        (e for e in build.episodes if e.scenario == calm and e.prompt == prompt_key(prompt) and calm is not None), None
    ) or build.add(None, prompt, 0, "stateful_check")
    second = build.add(None, prompt, 1 if first.purpose == "stateful_check" else 0, "stateful_check")
    return first.id, second.id


def parse_shard(text: str) -> tuple[int, int]:
    """'I/N' (1-based) -> (I, N); raise ValueError naming the form."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"shard {text!r} is not I/N, e.g. 2/4") from None
    if not 1 <= index <= count:
        raise ValueError(f"shard {text!r}: I must be between 1 and N")
    return index, count


def shard_of(plan: Plan, index: int, count: int) -> Plan:
    """The share of the plan's episodes shard `index` of `count` runs: every count-th episode by id, so each
    shard gets a slice of every scenario and together they run every episode exactly once."""
    mine = [e for e in plan.episodes if (e.number - 1) % count == index - 1]
    return Plan(mine, plan.baselines, plan.stateful_check)
