"""Running one cell: reset, begin, invoke the agent for each prompt, end, judge."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from flakeproxy.config import FlakeproxyConfig, Scenario
from flakeproxy.config.settings import HttpMockService
from flakeproxy.invariants.base import Invariant
from flakeproxy.replicas import aggregate_replicas, pass_at_k, pass_hat_k
from flakeproxy.results import CellResult, Outcome, PromptResult
from flakeproxy.runner.agents.base import Agent, Reply
from flakeproxy.runner.agents.python import PythonAdapter, import_object
from flakeproxy.runner.control import ControlClient
from flakeproxy.runner.mock import mock_call
from flakeproxy.verdict import Observation, Verdict, cannot_judge

STATEFUL_WARNING = (
    "Warning: No reset_endpoint configured. Contract matrix cells may share state. Results may be "
    "contaminated. Add reset_endpoint to your config for accurate isolation."
)


def negated(verdict: Verdict) -> Verdict:
    if verdict.outcome == "pass":
        return Verdict("fail", f"negated: {verdict.reason}", verdict.evidence)
    if verdict.outcome == "fail":
        return Verdict("pass", f"negated: {verdict.reason}", verdict.evidence)
    return verdict


def judge(invariant: Invariant, obs: Observation) -> Verdict:
    """An agent error is an error outcome, except for `completes`, whose whole question it is."""
    if obs.error is not None and getattr(invariant, "type", "") != "completes":
        return cannot_judge(f"agent error: {obs.error}")
    verdict = invariant.evaluate(obs)
    return negated(verdict) if invariant.negate else verdict


def aggregate(prompts: list[PromptResult]) -> tuple[Outcome, str]:
    """A cell fails if any prompt fails, else errors if any errored, else passes."""
    for outcome in ("fail", "error"):
        bad = [p for p in prompts if p.outcome == outcome]
        if bad:
            more = f" (and {len(bad) - 1} more prompt{'s' if len(bad) > 2 else ''})" if len(bad) > 1 else ""
            return outcome, f"{bad[0].reason}{more}"  # type: ignore[return-value]
    return "pass", prompts[0].reason if len(prompts) == 1 else f"all {len(prompts)} prompts pass"


@dataclass
class CellRunner:
    config: FlakeproxyConfig
    agent: Agent
    control: ControlClient | None
    baselines: dict[str, str | None]

    @property
    def has_reset(self) -> bool:
        return self.agent.has_reset or (self.config.agent is not None and self.config.agent.reset_function is not None)

    async def reset(self) -> None:
        assert self.config.agent is not None
        if self.config.agent.reset_function:
            fn = import_object(self.config.agent.reset_function)
            result = fn()
            if asyncio.iscoroutine(result):
                await result
        elif self.agent.has_reset:
            await self.agent.reset()

    def prompts(self, invariant: Invariant) -> list[str]:
        return invariant.probes or self.config.golden_prompts

    async def run(self, invariant: Invariant, scenario: Scenario) -> CellResult:
        """The cell, run.replicas times (each an independent invocation), combined by the aggregation rule."""
        runs = [await self._run_once(invariant, scenario) for _ in range(self.config.run.replicas)]
        if len(runs) == 1:
            return runs[0]
        scoring = self.config.scoring
        outcomes, scores = [r.outcome for r in runs], [r.score for r in runs]
        outcome, reason = aggregate_replicas(outcomes, scores, scoring.replica_aggregation, scoring.k)
        n, c = len(runs), outcomes.count("pass")
        return runs[0].model_copy(
            update={
                "outcome": outcome,
                "reason": f"{reason}; first non-pass: {next((r.reason for r in runs if r.outcome != 'pass'), '-')}",
                "prompts": [p for r in runs for p in r.prompts],
                "journal": [e for r in runs for e in r.journal],
                "faults_injected": [f for r in runs for f in r.faults_injected],
                "score": round(sum(scores) / n, 4),
                "replicas": outcomes,
                "flaky": len(set(outcomes)) > 1,
                "pass_at_k": pass_at_k(n, c, scoring.k),
                "pass_hat_k": pass_hat_k(n, c, scoring.k),
            }
        )

    async def _run_once(self, invariant: Invariant, scenario: Scenario) -> CellResult:
        await self.reset()
        label = f"{invariant.id} x {scenario.name}"
        cell = await self.control.begin(label) if self.control else label
        mocks = [s for s in self.config.services.values() if isinstance(s, HttpMockService) and s.record]
        for mock in mocks:
            await mock_call(mock, "reset")
        replies: list[tuple[str, Reply]] = []
        for prompt in self.prompts(invariant):
            replies.append((prompt, await self.agent.invoke(prompt, cell)))
        journal = await self.control.end(cell) if self.control else []
        if isinstance(self.agent, PythonAdapter):
            journal += self.agent.cell_journal(cell)
        for mock in mocks:
            journal += await mock_call(mock, "requests")
        result = await self._judge(invariant, scenario, replies, journal)
        result.cell_id = cell
        return result

    async def _judge(
        self, invariant: Invariant, scenario: Scenario, replies: list[tuple[str, Reply]], journal: list[dict[str, Any]]
    ) -> CellResult:
        prompts = []
        for prompt, reply in replies:
            obs = Observation(
                prompt,
                reply.text,
                reply.latency_ms,
                reply.error,
                journal,
                self.baselines.get(prompt),
                self.config.run.workspace,
                dict(self.config.services),
                self.config.judge,
                scenario.name,
            )
            verdict = await asyncio.to_thread(judge, invariant, obs)
            prompts.append(
                PromptResult(
                    prompt=prompt,
                    answer=(reply.text or "")[:4000] if reply.text is not None else None,
                    latency_ms=round(reply.latency_ms, 1),
                    error=reply.error,
                    outcome=verdict.outcome,
                    reason=verdict.reason,
                    score=verdict.value,
                    evidence=verdict.evidence,
                )
            )
        outcome, reason = aggregate(prompts)
        faults = [e["fault"] for e in journal if e.get("fault")]
        score = round(sum(p.score for p in prompts) / len(prompts), 4)
        return cell_result(
            invariant, scenario, outcome, reason, prompts=prompts, faults_injected=faults, journal=journal, score=score
        )


def cell_result(invariant: Invariant, scenario: Scenario, outcome: Outcome, reason: str, **rest: Any) -> CellResult:
    return CellResult(
        invariant=invariant.id,
        type=str(getattr(invariant, "type", "")),
        scenario=scenario.name,
        severity=invariant.severity,
        when=invariant.when,
        outcome=outcome,
        reason=reason,
        **rest,
    )


def not_applicable(invariant: Invariant, scenario: Scenario) -> CellResult:
    return cell_result(invariant, scenario, "not_applicable", f"when: {invariant.when} does not hold in this scenario")
