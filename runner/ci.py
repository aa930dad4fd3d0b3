"""`flakeproxy ci`: each configured pillar once (the contract matrix once, not three times), then the overall.

The pillars share the contract run's machinery: the proxy and the agent start once, every answer is an
episode from a reset with its own journal slice, and results.json holds them all with a `ci` section.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.config.can_fail import why_ci_cannot_fail
from flakeproxy.config.conversation import prompt_key, prompt_turns
from flakeproxy.errors import ConfigError
from flakeproxy.mutations import Mutation, MutationSet, mutations_for
from flakeproxy.planning.pillars import CALM, chaos_pillar, combine, mutation_pillar
from flakeproxy.planning.plan import Plan, plan_episodes
from flakeproxy.planning.profiles import chaos_scenario
from flakeproxy.replay.score import replay_pillar
from flakeproxy.results import Episode, PillarResult, RunResult, episode_id, shift_episode_id
from flakeproxy.runner.engine import ContractRun, Progress
from flakeproxy.runner.episodes import EpisodeRunner
from flakeproxy.runner.replay import check_replay, gather_sessions, run_replays


def check_ci(config: FlakeproxyConfig, source: str) -> None:
    """Everything ci needs before it starts anything: a pillar to run, an agent, prompts."""
    if config.agent is None:
        raise ConfigError(f"{source}: agent: missing; ci needs the agent to drive (type http, command or python)")
    if not (config.contract or config.chaos or config.mutations or config.replays):
        raise ConfigError(
            f"{source}: nothing for ci to run; add a contract: with a chaos_matrix, a top-level chaos: "
            "(with invariants:), mutations: (with invariants:), or replays: (with a contract:)"
        )
    if (config.chaos or config.mutations) and not config.golden_prompts:
        raise ConfigError(f"{source}: golden_prompts: empty; the chaos and mutation pillars mutate and send them")
    if config.contract is not None:
        from flakeproxy.planning.checks import plan_contract

        plan_contract(config, source)
    if config.replays is not None:  # a bad session file stops ci before anything starts
        check_replay(config, source, gather_sessions(config, source))


def absent(section: str) -> str:
    """Why a pillar did not run, as its line reads: `mutation  absent     not configured (no mutations: section)`."""
    return f"not configured (no {section}: section)"


class CiRun(ContractRun):
    def __init__(
        self,
        config: FlakeproxyConfig,
        config_path: str,
        output: Path | None,
        progress: Progress,
        min_overall: float | None,
    ) -> None:
        super().__init__(config, config_path, output, progress)
        self.min_overall = min_overall if min_overall is not None else config.scoring.min_overall
        self._next_id = 0

    def _new(self, **fields: object) -> Episode:
        self._next_id += 1
        return Episode.model_validate({"id": episode_id(self._next_id), **fields})

    async def _steps(self, runner: EpisodeRunner, limit: int) -> None:
        """Each configured pillar once (the contract last, so its matrix is the run's main table), then the
        overall."""
        pillars = [await self._mutation(runner, limit), await self._chaos(runner, limit)]
        contract, contract_passed = await self._contract(runner, limit)
        pillars.insert(0, contract)
        pillars.append(await self._replay(runner))
        contract_open = self.result.score is not None and self.result.score.verdict == "INCONCLUSIVE"
        ci = combine(pillars, self.min_overall, contract_passed, contract_open)
        self.result.ci = ci.model_copy(update={"cannot_fail": why_ci_cannot_fail(self.config, self.min_overall)})

    async def _replay(self, runner: EpisodeRunner) -> PillarResult:
        weight = self.config.scoring.weights.replay
        if self.config.replays is None:
            return PillarResult(name="replay", ran=False, weight=weight, summary=absent("replays"))
        sessions = gather_sessions(self.config, self.config_path)
        check_replay(self.config, self.config_path, sessions)
        self.result.replay = await run_replays(self, runner, self._new, sessions)
        self._write()
        return replay_pillar(self.result.replay, weight)

    async def _contract(self, runner: EpisodeRunner, limit: int) -> tuple[PillarResult, bool | None]:
        weight = self.config.scoring.weights.contract
        if self.config.contract is None:
            return PillarResult(name="contract", ran=False, weight=weight, summary=absent("contract")), None
        plan = plan_episodes(self.config, runner.has_reset)
        shift = self._next_id
        episodes = [e.model_copy(update={"id": shift_episode_id(e.id, shift)}) for e in plan.episodes]
        baselines = {k: shift_episode_id(v, shift) for k, v in plan.baselines.items()}
        check = (
            (shift_episode_id(plan.stateful_check[0], shift), shift_episode_id(plan.stateful_check[1], shift))
            if plan.stateful_check
            else None
        )
        self._next_id += len(plan.episodes)
        plan = Plan(episodes, baselines, check)
        await self._matrix(plan, runner, limit)
        self._score()
        assert self.result.score is not None
        score = self.result.score
        resilience = "not scored" if score.resilience is None else f"{score.resilience}%"
        summary = f"resilience {resilience}, {score.verdict}; " + ", ".join(
            f"{n} {k}" for k, n in sorted(score.counts.items())
        )
        pillar = PillarResult(
            name="contract", ran=True, score=score.resilience, weight=weight, passed=score.passed, summary=summary
        )
        return pillar, score.passed

    async def _mutation(self, runner: EpisodeRunner, limit: int) -> PillarResult:
        weight = self.config.scoring.weights.mutation
        if self.config.mutations is None:
            return PillarResult(name="mutation", ran=False, weight=weight, summary=absent("mutations"))
        generated, cached = await asyncio.to_thread(mutations_for, self.config, self.output)
        self._report_mutations(generated, cached)
        runner.pillar_scenarios[None] = CALM
        episodes = [self._mutation_episode(m) for m in generated.mutations]
        await self._episodes(runner, episodes, limit, len(episodes))
        await self._unattributed(final=True)  # the pillar's episodes are all in
        pillar = mutation_pillar(self.config, generated.mutations, dict(self.done), generated.skipped)
        self._write()
        return pillar

    def _report_mutations(self, generated: MutationSet, cached: bool) -> None:
        where = "from mutations.json" if cached else "generated"
        self.progress(f"mutation pillar: {len(generated.mutations)} mutations ({where})")
        for kind, why in generated.skipped.items():
            self.progress(f"mutation pillar: {kind} skipped: {why}")

    def _mutation_episode(self, mutation: Mutation) -> Episode:
        return self._new(
            scenario=None,
            prompt=mutation.text,
            turns=mutation.turns,
            prompt_index=mutation.prompt_index,
            purpose="mutation",
            mutation=mutation.id,
            label=f"mutation {mutation.type} | {mutation.id}",
        )

    async def _chaos(self, runner: EpisodeRunner, limit: int) -> PillarResult:
        weight = self.config.scoring.weights.chaos
        if self.config.chaos is None:
            return PillarResult(name="chaos", ran=False, weight=weight, summary=absent("chaos"))
        scenario, notes = chaos_scenario(self.config)
        for note in notes:
            self.warn(f"warning: {note}")
        runner.pillar_scenarios[scenario.name] = scenario
        episodes = [
            self._new(
                scenario=scenario.name,
                prompt=prompt_key(prompt),
                turns=prompt_turns(prompt),
                prompt_index=n,
                replica=r,
                purpose="chaos",
                label=f"{scenario.name} | p{n} | r{r}",
            )
            for n, prompt in enumerate(self.config.golden_prompts)
            for r in range(self.config.run.min_replicas)  # adaptive replicas: the contract's cells only
        ]
        await self._episodes(runner, episodes, limit, len(episodes))
        await self._unattributed(final=True)  # the pillar's episodes are all in
        pillar = chaos_pillar(self.config, scenario, dict(self.done))
        self._write()
        return pillar


async def run_ci_async(
    config: FlakeproxyConfig,
    config_path: str,
    output: Path | None = None,
    progress: Progress = lambda line: None,
    min_overall: float | None = None,
) -> RunResult:
    check_ci(config, config_path)
    return await CiRun(config, config_path, output, progress, min_overall).run()
