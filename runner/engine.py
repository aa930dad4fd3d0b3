"""The contract run: every (invariant x scenario) cell, scored, with results written as it goes."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import platform
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from flakeproxy import __version__
from flakeproxy.config import FlakeproxyConfig, Scenario
from flakeproxy.config.settings import HttpMockService
from flakeproxy.contract import plan_contract
from flakeproxy.errors import ConfigError
from flakeproxy.invariants.base import Invariant
from flakeproxy.results import CellResult, RunResult
from flakeproxy.runner.agents import make_agent
from flakeproxy.runner.agents.python import PythonAdapter
from flakeproxy.runner.cells import STATEFUL_WARNING, CellRunner, not_applicable
from flakeproxy.runner.control import ControlClient
from flakeproxy.runner.local import LocalProxy
from flakeproxy.runner.mock import MockService
from flakeproxy.scoring import score_cells

Progress = Callable[[str], None]


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("mitmproxy", "aiohttp", "pydantic"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    return out


def new_result(config: FlakeproxyConfig, config_path: str) -> RunResult:
    assert config.contract is not None
    return RunResult(
        flakeproxy_version=__version__,
        versions=_versions(),
        config_path=config_path,
        config_sha256=hashlib.sha256(Path(config_path).read_bytes()).hexdigest(),
        contract=config.contract.name,
        seed=config.run.seed,
        started_at=_now(),
        scenarios=[s.name for s in config.matrix],
        invariants=[i.id for i in config.contract.invariants],
    )


def write(result: RunResult, output: Path | None) -> None:
    if output is None:
        return
    output.mkdir(parents=True, exist_ok=True)
    tmp = output / "results.json.tmp"
    tmp.write_text(result.model_dump_json(indent=2))
    tmp.replace(output / "results.json")


def check_runnable(config: FlakeproxyConfig, source: str) -> None:
    plan_contract(config, source)
    if config.agent is None:
        raise ConfigError(
            f"{source}: agent: missing; contract run needs the agent to drive (type http, command or python)"
        )
    assert config.contract is not None
    if not config.golden_prompts and not all(i.probes for i in config.contract.invariants):
        raise ConfigError(f"{source}: golden_prompts: empty; add at least one prompt (or probes on every invariant)")


class ContractRun:
    def __init__(self, config: FlakeproxyConfig, config_path: str, output: Path | None, progress: Progress) -> None:
        self.config, self.config_path, self.output, self.progress = config, config_path, output, progress
        workspace = config.run.workspace
        if workspace is not None and not Path(workspace).is_absolute():  # relative to the config file
            config = config.model_copy(
                update={
                    "run": config.run.model_copy(
                        update={"workspace": str(Path(config_path).resolve().parent / workspace)}
                    )
                }
            )
            self.config = config
        self.result = new_result(config, config_path)
        assert config.agent is not None
        self.agent = make_agent(config.agent)
        if isinstance(self.agent, PythonAdapter):
            self.agent.near = Path(config_path).resolve().parent
        self.local: LocalProxy | None = None
        self.mocks: list[MockService] = []
        self.control: ControlClient | None = None

    async def _start_mocks(self) -> None:
        """Local runs start the config's http_mock services; with a sidecar they run elsewhere (flakeproxy mock)."""
        if self.config.proxy.admin_url is not None:
            return
        for name, service in self.config.services.items():
            if isinstance(service, HttpMockService):
                mock = MockService(name, service)
                await mock.start()
                self.mocks.append(mock)

    async def _start_proxy(self) -> None:
        proxy = self.config.proxy
        if proxy.admin_url is None and not proxy.listeners and not proxy.forward:
            return  # nothing on the wire to break (a python agent with wrapped tools)
        if proxy.admin_url is None:
            self.local = LocalProxy(self.config_path)
            await self.local.start()
        self.control = ControlClient(proxy.admin_url or f"http://{proxy.admin}", proxy.token)
        await self.control.__aenter__()
        await self.control.wait_healthy()
        await self.control.reset()

    async def _set_scenario(self, scenario: Scenario | None) -> None:
        if self.control:
            await self.control.scenario(scenario.name if scenario else None, self.config.run.seed)
        if isinstance(self.agent, PythonAdapter):
            self.agent.set_scenario(scenario, self.config.run.seed)

    async def _calm_answers(self, runner: CellRunner) -> None:
        """No chaos: the baselines of behavior_unchanged (auto), and the stateful-agent check."""
        assert self.config.contract is not None
        await self._set_scenario(None)
        auto = [
            i
            for i in self.config.contract.invariants
            if getattr(i, "type", "") == "behavior_unchanged" and getattr(i, "baseline", "") == "auto"
        ]
        for prompt in {p for inv in auto for p in runner.prompts(inv)}:
            reply = await self.agent.invoke(prompt, None)
            runner.baselines[prompt] = reply.text
        if not runner.has_reset and self.config.golden_prompts:
            first, second = [await self.agent.invoke(self.config.golden_prompts[0], None) for _ in range(2)]
            if first.text != second.text:
                print(STATEFUL_WARNING, file=sys.stderr)
                self.result.warnings.append(STATEFUL_WARNING)

    async def _scenario(self, runner: CellRunner, scenario: Scenario, done: list[int], total: int) -> None:
        assert self.config.contract is not None
        await self._set_scenario(scenario)
        limit = asyncio.Semaphore(self.config.run.concurrency)

        async def one(invariant: Invariant) -> CellResult:
            if not scenario.applies(invariant.when):
                cell = not_applicable(invariant, scenario)
            else:
                async with limit:
                    cell = await runner.run(invariant, scenario)
            done[0] += 1
            self.progress(
                f"[{done[0]:>{len(str(total))}}/{total}] {scenario.name} / {invariant.id}: "
                f"{cell.outcome.upper().replace('_', ' ')}"
            )
            if self.local:
                self.local.check_alive()
            return cell

        cells = await asyncio.gather(*(one(inv) for inv in self.config.contract.invariants))
        if self.control and self.config.run.concurrency > 1:
            await self._count_unattributed(cells)
        self.result.cells.extend(cells)
        write(self.result, self.output)

    async def _count_unattributed(self, cells: list[CellResult]) -> None:
        """With cells running at once, a request the proxy could not attribute is counted on each candidate."""
        assert self.control is not None
        entries = (await self.control.call("GET", "/journal"))["entries"]
        loose = [e for e in entries if e["cell"] is None]
        for cell in cells:
            cell.unattributed_requests = sum(1 for e in loose if cell.cell_id in e["cell_candidates"])

    async def run(self) -> RunResult:
        total = len(self.config.matrix) * len(self.result.invariants)
        try:
            await self.agent.start()
            await self._start_mocks()
            await self._start_proxy()
            runner = CellRunner(self.config, self.agent, self.control, {})
            await self._calm_answers(runner)
            done = [0]
            for scenario in self.config.matrix:
                await self._scenario(runner, scenario, done, total)
            assert self.config.contract is not None
            weights = {i.id: (i.weight, i.gate) for i in self.config.contract.invariants}
            scoring = self.config.scoring
            self.result.score = score_cells(self.result.cells, scoring.min_resilience, weights, scoring.pass_threshold)
            self.result.complete = True
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.result.interrupted_by = "interrupted (Ctrl-C or a signal)"
            raise
        except Exception as e:
            self.result.interrupted_by = f"{type(e).__name__}: {e}"
            raise
        finally:
            self.result.finished_at = _now()
            write(self.result, self.output)
            await self._stop()
        return self.result

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


async def run_contract_async(
    config: FlakeproxyConfig, config_path: str, output: Path | None = None, progress: Progress = lambda line: None
) -> RunResult:
    check_runnable(config, config_path)
    return await ContractRun(config, config_path, output, progress).run()


def run_contract(config_path: str, output: str | None = None, progress: Progress = lambda line: None) -> RunResult:
    """Python equivalent of `flakeproxy contract run`: load, run every cell, score; results.json in output."""
    from flakeproxy.config import load_config

    config = load_config(config_path)
    out = Path(output or config.run.output)
    return asyncio.run(run_contract_async(config, config_path, out, progress))
