"""The contract run, as its steps: plan the episodes -> run them (reset, capture) -> judge the cells -> score.

Results are written as they come (throttled while episodes run, after every scenario's cells, and on any
stop), so an interrupted run keeps what it did.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.config.settings import HttpMockService
from flakeproxy.config.warnings import attribution_fix, config_warnings
from flakeproxy.console import echo
from flakeproxy.crash import crashed
from flakeproxy.errors import ConfigError, FlakeproxyError
from flakeproxy.judging.blind import blind_to_cuts
from flakeproxy.judging.calm_checks import check_calm
from flakeproxy.judging.cells import Context, judge_scenario
from flakeproxy.judging.coverage import coverage, describe, scenario_coverage
from flakeproxy.judging.scoring import score_contract
from flakeproxy.judging.spending import account, loose_spend, pricing_date, run_spend, scenario_spend
from flakeproxy.judging.unreached import undecided
from flakeproxy.planning.checks import has_reset, plan_contract, resolve_paths
from flakeproxy.planning.concurrency import run_concurrency
from flakeproxy.planning.plan import STATEFUL_WARNING, Plan, is_calm, plan_episodes, shard_of
from flakeproxy.proxycore.redact import Redactor
from flakeproxy.results import CellResult, Episode, RunResult, ScenarioCoverage, ShardInfo
from flakeproxy.results_spend import Spend
from flakeproxy.runner.agents import make_agent
from flakeproxy.runner.budget import RunSpend
from flakeproxy.runner.control import ControlClient
from flakeproxy.runner.episodes import EpisodeRunner
from flakeproxy.runner.local import LocalProxy, needs_local_proxy
from flakeproxy.runner.ports import EpisodePort, MockPort, ProxyPort
from flakeproxy.runner.recording import recording_hooks
from flakeproxy.runner.results_file import check_writable, new_result, now, write
from flakeproxy.runner.sidecar import check_targets, lease_ms, release, token_hint
from flakeproxy.runner.telemetry import TelemetryExport, telemetry_export

if TYPE_CHECKING:
    from flakeproxy.runner.mock import MockService

Progress = Callable[[str], None]
#: results.json is rewritten as episodes come in, at most every WRITE_EVERY_S, and never more often than a write
#: takes WRITE_SHARE of the time (a write is the whole result: a long run's takes longer, and it holds the loop).
WRITE_EVERY_S = 2.0
WRITE_SHARE = 0.05


def check_runnable(config: FlakeproxyConfig, source: str) -> None:
    plan_contract(config, source)


class ContractRun:
    def __init__(
        self,
        config: FlakeproxyConfig,
        config_path: str,
        output: Path | None,
        progress: Progress,
        shard: tuple[int, int] | None = None,
        local: LocalProxy | None = None,
    ) -> None:
        self.config = resolve_paths(config, config_path)
        self.shard = shard
        self.config_path, self.output, self.progress = config_path, output, progress
        self.result = new_result(self.config, config_path)
        assert self.config.agent is not None
        self.agent = make_agent(self.config.agent, Path(config_path).resolve().parent)
        self.local = local  # a local proxy launched already (launch_local), else started by _start
        self.mocks: list[MockService] = []
        self.control: ControlClient | None = None
        self.done: dict[str, Episode] = {}
        self._written = 0.0
        self._write_s = 0.0  # how long the last write of results.json took
        self._loose_seen: set[int] = set()  # unattributed requests counted
        self._loose_kept: set[int] = set()  # ... and kept in results.json (once complete)
        self._loose_since = 0  # every unattributed request up to this seq is kept: read on from there
        self._loose_read = 0  # the newest unattributed seq read so far
        self._loose_by_cell: Counter[str] = Counter()  # cell id -> unattributed requests it may have made
        self._warned_loose = False
        self.record: Path | None = None  # contract run --record DIR: a replay session file per episode
        self.telemetry: TelemetryExport | None = None  # telemetry: flakeproxy's spans out over OTLP
        self.spent = RunSpend(self.config.run.budget)  # run.budget: what the episodes spent so far

    def warn(self, line: str) -> None:
        echo(line, err=True)  # a reader gone does not stop the run
        self.result.warnings.append(line.removeprefix("warning: "))

    def _write(self, force: bool = True) -> None:
        if force or time.monotonic() - self._written >= max(WRITE_EVERY_S, self._write_s / WRITE_SHARE):
            began = time.monotonic()
            self.result.episodes = self._in_plan_order()
            if self.shard is None:  # what applied so far, also in a run stopped early (budget, Ctrl-C, a crash)
                self.result.coverage = self._coverage()
            self.result.spend = scenario_spend(self.config, self.result.episodes)
            loose = self.result.unattributed_journal
            self.result.spend_total = run_spend(
                self.config, self.result.episodes, [*loose, *self.result.cut_short_journal]
            )
            self.result.spend_unattributed = loose_spend(self.config, loose)
            self.result.pricing_as_of = pricing_date(self.config)
            write(self.result, self.output)
            self._written = time.monotonic()
            self._write_s = self._written - began

    async def _start(self) -> None:
        proxy = self.config.proxy
        if self.local is None and needs_local_proxy(self.config):
            self.local = LocalProxy(self.config_path, config=self.config)
            await self.local.launch()  # first: the proxy starts while the agent and the mocks do
        await self.agent.start()
        if proxy.admin_url is None:  # local runs start the http_mock services; a sidecar's run elsewhere
            for name, service in self.config.services.items():
                if isinstance(service, HttpMockService):
                    from flakeproxy.runner.mock import MockService  # aiohttp's server, for a run that has a mock

                    self.mocks.append(mock := MockService(name, service, Redactor(self.config.redact)))
                    await mock.start()
        if self.local is None and proxy.admin_url is None:
            return  # nothing on the wire to break (a python agent with wrapped tools)
        if self.local is not None:
            await self.local.start()
        url = proxy.admin_url or f"http://{proxy.admin}"
        self.control = ControlClient(url, proxy.token, lambda: token_hint(self.config_path))
        await self.control.__aenter__()
        where = "proxy.admin_url" if proxy.admin_url else "proxy.admin"
        health = await self.control.wait_ready(proxy.ready_timeout_ms / 1000, where, self.progress)
        unchecked = check_targets(self.config, self.config_path, health, self.control.url)
        if unchecked:
            self.warn(unchecked)
        await self.control.reset()

    def _ports(self, sequential: bool) -> list[EpisodePort]:
        """What keeps records of each episode: the proxy (first: it names the episode), the agent's own (a python
        agent's wrapped tools), the mock services that record requests."""
        lease = None if self.local is not None else lease_ms(self.config)  # a local proxy dies with its runner
        proxy: list[EpisodePort] = [ProxyPort(self.control, lease)] if self.control else []
        local = {mock.name: mock for mock in self.mocks}  # those this run started: their secrets are in memory here
        mocks = {n: s for n, s in self.config.services.items() if isinstance(s, HttpMockService) and s.record}
        own = self.agent.ports(Redactor(self.config.redact))
        return proxy + own + [MockPort(service, sequential, local.get(name)) for name, service in mocks.items()]

    def _concurrency(self) -> int:
        """Episodes at once (flakeproxy.planning.concurrency, which `flakeproxy plan` prints too)."""
        return run_concurrency(self.config).episodes

    async def _episodes(
        self,
        runner: EpisodeRunner,
        episodes: list[Episode],
        limit: int,
        total: int,
        base: int | None = None,
        after: Callable[[Episode], Awaitable[None]] | None = None,
    ) -> None:
        """Run episodes, at most `limit` at once, each under its own scenario; progress counts from `base` done
        (default: these alone); `after` is awaited once each episode is in, before its slot is free again."""
        gate, polling = asyncio.Semaphore(limit), asyncio.Lock()
        base = len(self.done) if base is None else base

        async def one(episode: Episode, following: Episode | None) -> None:
            async with gate:  # held until the episode is judged: at concurrency 1 nothing starts before (exit 3, 5)
                await settle(await runner.run(episode, following))

        async def settle(done: Episode) -> None:
            self.done[done.id] = done
            self.result.agent_invocations += sum(t.sent for t in done.transcript) if done.transcript else 1  # per turn
            self.spent.charge(account(done, self.config), done.journal)
            line = _line(len(self.done) - base, total, done)
            async with polling:  # the progress lines in the order the episodes ended
                if self._loose_news():  # what no episode could be tied to was spent too (run.budget, progress)
                    await self._unattributed()
                self.progress(self._spent_line(line))
            if done.unsettled:
                self.warn(
                    f"warning: episode {done.id} ({done.label}): {done.unsettled} exchange(s) still open 2 s after "
                    f"{'the episode ended' if done.lost else 'the agent answered'}; a fault on them counts as applied "
                    "only where it had reached the agent already (a hold has, from its start)"
                )
            if done.still_calling or done.late_requests:
                self.warn(late_line(done))
            if self.local:
                self.local.check_alive()
            if after is not None:
                await after(done)
            self._write(force=False)
            self._check_budget()

        # one at a time, the gate lets them in in this order: each knows the one that comes next (runner.run)
        nexts: list[Episode | None] = [*episodes[1:], None] if limit == 1 else [None] * len(episodes)
        tasks = [asyncio.ensure_future(one(e, n)) for e, n in zip(episodes, nexts, strict=False)]  # a step of none
        try:
            await asyncio.gather(*tasks)
        finally:  # one episode's failure (or Ctrl-C) stops the others: no episode runs on after the run ended
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _check_budget(self) -> None:
        """run.budget: crossed, the run stops here (BudgetCrossed, exit 5); warned once when it cannot count some
        calls' usage."""
        if (warning := self.spent.warning()) is not None:
            self.warn(warning)
        self.result.budget_crossed = self.spent.crossed()
        self.spent.check()

    def _spent_line(self, line: str) -> str:
        """A progress line, with the run's spend so far once it has made LLM calls (or has a budget)."""
        return f"{line}; {self.spent.line()}" if self.spent.llm_calls or self.spent.budget else line

    def _in_plan_order(self) -> list[Episode]:
        """The episodes done so far in plan order (e1, e2, ...), whatever order they finished in."""
        return sorted(self.done.values(), key=lambda e: e.number)

    async def _unattributed(self, final: bool = False) -> None:
        """Requests no episode could be tied to: kept in results.json and counted on every episode that might
        have made them (their journal checks then say so instead of judging an incomplete journal). Episodes
        of every scenario overlap, so a request counts on each candidate, whether it finished yet or not; it is kept
        once it has finished (its fault's outcome known), or when `final` (every episode of the step is in). What
        the kept ones spent is the run's (RunSpend, run.budget), read on from the last seq kept in order."""
        if self.control is None:
            return
        said = self.control.loose_seq or 0  # every request of no episode up to it is in this read (or was dropped)
        fresh = [
            e for e in await self.control.unattributed(self._loose_since) if e.get("seq", 0) not in self._loose_kept
        ]
        loose = [e for e in fresh if e.get("seq", 0) not in self._loose_seen]  # counted now, complete or not
        self._loose_seen.update(e.get("seq", 0) for e in loose)
        for entry in loose:
            self._loose_by_cell.update(set(entry.get("episode_candidates") or []))
        late = self._named_late(loose)
        for episode in self.done.values():
            episode.unattributed = self._loose_by_cell[episode.cell_id or ""]
        # kept once complete (a request still open has no fault outcome yet: read again next time), or at the end
        kept = [e for e in fresh if e.get("complete", True) or final]
        self._loose_kept.update(e.get("seq", 0) for e in kept)
        self._loose_read = max([self._loose_read, said, *(e.get("seq", 0) for e in fresh)])
        waiting = [e.get("seq", 0) for e in fresh if e.get("seq", 0) not in self._loose_kept]
        self._loose_since = (
            min(waiting) - 1 if waiting else max((e.get("seq", 0) for e in fresh), default=self._loose_since)
        )
        self.result.unattributed_journal += kept  # redacted by the proxy, as GET /journal gives every entry
        self.result.unattributed_requests += len(loose)
        self.spent.charge(loose_spend(self.config, kept) or Spend(), kept, unattributed=True)  # this run's spend
        if late:
            self.warn(late_named_line(late))
        if len(loose) > sum(late.values()) and not self._warned_loose:
            self._warned_loose = True
            self.warn(
                "warning: proxied requests could not be attributed to an episode (sent while no episode, or "
                f"several, were open, with nothing naming theirs): {attribution_fix(self.config)}; the journal "
                "checks of the episodes concerned are ERROR; results.json counts them (unattributed_requests)"
            )
        if final:  # after the last episode of a step: what no episode could be tied to counts against run.budget too
            self._check_budget()

    def _named_late(self, loose: list[dict[str, Any]]) -> dict[str, int]:
        """The requests among `loose` that named an episode of this run after it had ended (the proxy tied them to
        no other): counted on it (Episode.late_unattributed); {episode label: how many}."""
        by_cell = {e.cell_id: e for e in self.done.values() if e.cell_id}
        late: dict[str, int] = {}
        for entry in loose:
            episode = by_cell.get(entry.get("named_episode") or "")
            if episode is not None:
                episode.late_unattributed += 1
                name = f"{episode.id} ({episode.label})"
                late[name] = late.get(name, 0) + 1
        return late

    def _loose_news(self) -> bool:
        """Whether the proxy may hold unattributed requests this run has not read (or read still open): the last
        episode's end said a newer one came (ControlClient.loose_seq), or it did not say. Reading them after every
        episode was a control call per episode for a journal that mostly has none."""
        said = self.control.loose_seq if self.control is not None else None
        return said is None or said > self._loose_read or self._loose_since < self._loose_read

    def _stateful(self, plan: Plan) -> None:
        if plan.stateful_check is None or STATEFUL_WARNING in self.result.warnings:
            return
        first, second = (self.done.get(i) for i in plan.stateful_check)
        if first is not None and second is not None and first.answer != second.answer:
            self.warn(STATEFUL_WARNING)  # the spec's words; then what it rests on, and this agent's reset key
            key = {"http": "reset_endpoint", "command": "reset_command", "python": "reset_function"}.get(
                self.config.agent.type if self.config.agent else "", "reset_endpoint"
            )
            a, b = first.answer or "", second.answer or ""
            at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
            start = max(0, at - 20)  # where they part
            self.warn(
                "note: the same prompt asked twice with nothing broken got two answers, which part at "
                f"{a[start : at + 40]!r} / {b[start : at + 40]!r}; an agent that varies its answers by design "
                f"(sampling, a clock) shows this too; this agent's reset is agent.{key}"
            )

    async def _scenarios(self, plan: Plan, runner: EpisodeRunner, limit: int) -> None:
        """Run every episode of the plan (scenarios overlap: each episode carries its own), and judge each
        scenario as soon as its episodes and the calm ones it may compare with are in; cells in matrix order."""
        groups: dict[str | None, list[Episode]] = {}
        for episode in plan.episodes:
            groups.setdefault(episode.scenario, []).append(episode)
        waiting = {name: {e.id for e in episodes} for name, episodes in groups.items()}
        calm = [n for n in groups if n is not None and is_calm(self.config.scenario(n))]
        ctx = Context(self.config, self.done, plan.baselines)
        before, judged = list(self.result.cells), {}
        lock = asyncio.Lock()

        async def after(episode: Episode) -> None:
            waiting[episode.scenario].discard(episode.id)
            async with lock:  # one judge at a time, in matrix order
                for name in [n for n in groups if n is not None and n not in judged and self._ready(n, waiting, calm)]:
                    judged[name] = await self._judge(name, plan, ctx)
                    self.result.cells = before + [c for n in groups if n in judged for c in judged[n]]
                    self._write()

        await self._episodes(runner, plan.episodes, limit, len(plan.episodes), len(self.done), after)
        await self._unattributed(final=True)
        self._stateful(plan)
        self._write()

    @staticmethod
    def _ready(name: str, waiting: dict[str | None, set[str]], calm: list[str]) -> bool:
        """A scenario can be judged once its episodes are in, and the calm ones it may compare with (baselines)
        and whose world it is judged in (flakeproxy.judging.calm_checks)."""
        return not waiting[name] and not waiting.get(None) and not any(waiting[c] for c in calm)

    async def _judge(self, name: str, plan: Plan, ctx: Context) -> list[CellResult]:
        await self._unattributed()
        self._stateful(plan)
        if self.shard is not None:
            return []
        scenario = self.config.scenario(name)
        done = self._in_plan_order()  # verdicts in plan order, as at concurrency 1
        for line in check_calm(self.config, name, done) if is_calm(scenario) else []:  # exit 3: an upstream down
            if line.removeprefix("warning: ") not in self.result.warnings:
                self.warn(line)
        covered = scenario_coverage(scenario, done, self.result.unattributed_journal)
        note = describe(covered, attribution_fix(self.config), undecided(self.config, scenario, done))
        if note:
            self.warn(note)
        cells = await asyncio.to_thread(judge_scenario, scenario, done, ctx)
        blind = blind_to_cuts(self.config, covered, cells)
        if blind and blind.removeprefix("warning: ") not in self.result.warnings:  # adaptive rounds judge again
            self.warn(blind)
        if self.telemetry is not None:
            self.telemetry.judged(cells, self.done)
        return cells

    async def run(self) -> RunResult:
        """Start the proxy and the agent, run the steps, and whatever happens write the results and stop."""
        for line in config_warnings(self.config):
            self.warn(f"warning: {line}")
        try:
            check_writable(self.output)  # an output folder it cannot write is said now, not after the run
            self.telemetry = telemetry_export(self.config)
            await self._start()
            limit = self._concurrency()
            ports = self._ports(sequential=limit == 1)
            runner = EpisodeRunner(self.config, self.agent, self.control, ports=ports, own_proxy=self.local is not None)
            runner.span_waits.warn = self.warn
            runner.hooks += await recording_hooks(self)
            runner.hooks += [self.telemetry] if self.telemetry else []
            await self._steps(runner, limit)
            self.result.complete = True
        except (asyncio.CancelledError, KeyboardInterrupt) as e:
            # the signal's name when the run command cancelled the run for one (cli/running.py run_until_signal)
            self.result.interrupted_by = str(e.args[0]) if e.args and isinstance(e.args[0], str) else "SIGINT"
            raise
        except FlakeproxyError as e:
            self.result.interrupted_by = f"{type(e).__name__}: {e}"
            raise
        except Exception as e:  # a bug, or something no one foresaw: the results so far, the proxy stopped, exit 3
            self.result.interrupted_by = f"{type(e).__name__}: {e}"
            raise crashed(e, self.output) from e
        finally:
            self.result.finished_at = now()
            undelivered = await asyncio.to_thread(self.telemetry.close) if self.telemetry is not None else None
            if undelivered:
                self.warn(undelivered)
            try:  # end the episodes a stopped run left open: a sidecar serves on, and what they spent counts
                if self.control is not None and (self.local is None or not self.result.complete):
                    await release(self.control, self.warn)
                    self.result.cut_short_journal = list(self.control.released)
            finally:
                try:
                    self._write()
                finally:
                    await self._stop()
        return self.result

    async def _steps(self, runner: EpisodeRunner, limit: int) -> None:
        """The contract: plan its episodes, run them scenario by scenario (judging each), score. A shard runs
        its share of the episodes only; `flakeproxy merge` judges and scores them all together."""
        plan = plan_episodes(self.config, runner.has_reset)
        if self.shard is not None:
            plan = shard_of(plan, *self.shard)
            self.result.shard = ShardInfo(
                index=self.shard[0], count=self.shard[1], episodes=[e.id for e in plan.episodes]
            )
        await self._matrix(plan, runner, limit)
        if self.shard is None:
            self._score()

    async def _matrix(self, plan: Plan, runner: EpisodeRunner, limit: int) -> None:
        """The plan's episodes, judged scenario by scenario; with adaptive replicas, in rounds (runner/adaptive)."""
        if self.config.run.adaptive is None:
            await self._scenarios(plan, runner, limit)
            return
        from flakeproxy.runner.adaptive import run_adaptive

        await run_adaptive(self, plan, runner, limit)

    def _coverage(self) -> list[ScenarioCoverage]:
        return coverage(self.config, self._in_plan_order(), self.result.unattributed_journal)

    def _score(self) -> None:
        self.result.coverage = self._coverage()
        self.result.score = score_contract(self.config, self.result.cells, self.result.coverage)

    async def _stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.agent.close()
        if self.control:
            with contextlib.suppress(Exception):
                await self.control.__aexit__()
        if self.local:
            await self.local.stop()
        for mock in self.mocks:
            await mock.stop()


def _line(n: int, total: int, episode: Episode) -> str:
    where = episode.scenario or f"({episode.purpose}{' ' + episode.mutation if episode.mutation else ''})"
    what = f"agent error: {episode.error}" if episode.error else f"answered in {episode.latency_ms / 1000:.1f} s"
    applied = len(episode.faults())
    faults = f", {applied} fault{'s' if applied != 1 else ''} applied" if applied else ""
    if episode.purpose == "replay":  # its prompt index is only its place in the list: name the session
        where, of = f"replay {episode.label.removeprefix('replay | ')}", ""
    else:
        of = f" p{episode.prompt_index} r{episode.replica}"
    return f"[{n:>{len(str(total))}}/{total}] {where}{of}: {what}{faults}"


async def run_contract_async(
    config: FlakeproxyConfig,
    config_path: str,
    output: Path | None = None,
    progress: Progress = lambda line: None,
    shard: tuple[int, int] | None = None,
    record: Path | None = None,
    local: LocalProxy | None = None,
) -> RunResult:
    try:
        check_runnable(config, config_path)
        if shard is not None and config.run.adaptive is not None:
            raise ConfigError(
                "--shard needs a fixed run.replicas: adaptive replicas {min, max} decide what to run from verdicts "
                "across the whole matrix; set run.replicas: N to shard, or run unsharded"
            )
    except BaseException:
        if local is not None:
            await local.stop()
        raise
    run = ContractRun(config, config_path, output, progress, shard, local)
    run.record = record
    return await run.run()


def run_contract(config_path: str, output: str | None = None, progress: Progress = lambda line: None) -> RunResult:
    """Python equivalent of `flakeproxy contract run`: load, run every episode, judge, score; results.json."""
    from flakeproxy.config import load_config

    config = load_config(config_path)
    out = Path(output or config.run.output)
    return asyncio.run(run_contract_async(config, config_path, out, progress))


__all__ = [
    "STATEFUL_WARNING",
    "ContractRun",
    "has_reset",
    "run_contract",
    "run_contract_async",
]


def late_line(done: Episode) -> str:
    """What an episode that got no reply did after: its late requests, kept in it, or still calling (late_calls)."""
    head = f"warning: episode {done.id} ({done.label}): its agent gave no reply"
    kept = f"; its {done.late_requests} late request(s) are kept in this episode" if done.late_requests else ""
    if done.still_calling:
        return (
            f"{head} and was still calling through the proxy when the runner stopped waiting{kept}; what it sends "
            "from now on may be tied to the next episode (run.attribution: header or trace tells them apart)"
        )
    return f"{head}, then went on calling{kept}; the runner waited for it to stop before the next episode"


def late_named_line(late: dict[str, int]) -> str:
    """The requests that named an episode after it had ended (read in one go): which, and what became of them."""
    named = ", ".join(f"{name} x{n}" if n > 1 else name for name, n in late.items())
    return (
        f"warning: {sum(late.values())} request(s) named an episode of this run after it had ended ({named}): its "
        "agent was still calling (a retry after the runner's timeout, work in the background); the proxy tied them "
        "to no other episode and broke none of them; they are in results.json's unattributed_journal "
        "(named_episode), and a journal check of the episode they name cannot PASS once they are read"
    )
