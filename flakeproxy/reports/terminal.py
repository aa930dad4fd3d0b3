"""The invariant x scenario matrix, the score and the verdict, as terminal text."""

from __future__ import annotations

from flakeproxy.reports.excerpts import cited
from flakeproxy.reports.facts import (
    cannot_fail,
    failed_under_pass,
    interruption,
    left_out,
    rate_interval,
    score_text,
    shard_note,
)
from flakeproxy.reports.spend import terminal_lines as spend_lines
from flakeproxy.reports.transcript import evidence, transcript_text
from flakeproxy.results import CellResult, RunResult
from flakeproxy.safe_text import visible

SYMBOL = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "not_applicable": "n/a", "inconclusive": "INCONCLUSIVE"}


def coverage_lines(result: RunResult) -> list[str]:
    """Per chaos scenario that ran: faults decided vs applied (changed what the agent received); then the cost.
    A scenario no episode of which ran (the run stopped before it) gets no line: there is nothing to say of it."""
    lines = []
    for cov in result.coverage:
        if not cov.chaos or not cov.episodes:
            continue
        mark = "  <- injected nothing" if cov.injected_nothing else ""
        reached = f", reached the model {cov.reached_model}" if cov.reached_model is not None else ""
        lines.append(f"faults {cov.scenario}: decided {cov.decided}, applied {cov.applied}{reached}{mark}")
        for fault in cov.faults:
            if fault.applied_turns:  # a conversation's: which turns it hit
                hits = ", ".join(f"turn {t} x{n}" for t, n in sorted(fault.applied_turns.items()))
                lines.append(f"  {fault.section}[{fault.index}] {fault.kind}: applied on {hits}")
            if fault.decided and fault.applied < fault.decided and fault.not_applied_reasons:
                lines.append(f"  {fault.section}[{fault.index}] {fault.kind}: {fault.not_applied_reasons[0]}")
            if fault.reached_model is not None and fault.reached_model < fault.applied and fault.not_delivered_reasons:
                why = fault.not_delivered_reasons[0]
                lines.append(f"  {fault.section}[{fault.index}] {fault.kind}: did not reach the model: {why}")
    episodes = [e for e in result.episodes if e.purpose == "matrix"]
    lines.append(
        f"{len(result.episodes)} episodes ({len(episodes)} in the matrix), {result.agent_invocations} agent "
        f"invocations, isolation: {result.isolation}"
        + (f"; {result.unattributed_requests} requests not attributed" if result.unattributed_requests else "")
    )
    return [*lines, ""]


#: Conversations shown turn by turn under the failed cells (the rest are in report.html and results.json).
MAX_CONVERSATIONS = 3


def conversation_lines(result: RunResult, problems: list[CellResult]) -> list[str]:
    """The first few conversations that failed (then errored) a cell, turn by turn with their faults: the
    evidence, never one that passed the cell (transcript.evidence chooses them)."""
    shown = [transcript_text(episode, cell) or "" for episode, cell in evidence(result, problems, MAX_CONVERSATIONS)]
    return ["", *"".join(shown).rstrip("\n").splitlines()] if shown else []


def render(result: RunResult) -> str:
    """The contract's matrix (when the run had a contract) and the ci pillars (when it was `ci`)."""
    parts = [_contract(result)] if result.contract is not None else []
    if result.ci is not None:
        from flakeproxy.reports.ci import render_ci

        parts.append(render_ci(result))
    elif result.contract is None:
        parts.append(f"INCOMPLETE: {interruption(result) or 'nothing was run'}")
    return visible("\n\n".join(parts))  # names and reasons may hold ESC: shown, never run by the terminal


def _contract(result: RunResult) -> str:
    cells = {(c.invariant, c.scenario): c for c in result.cells}
    first = max([len("invariant"), *(len(i) for i in result.invariants)])
    widths = [
        max(len(s), 5, *(len(SYMBOL[c.outcome]) for c in result.cells if c.scenario == s)) for s in result.scenarios
    ]
    lines = [f"contract {result.contract!r}, seed {result.seed}", ""]
    lines.append(
        "  ".join([f"{'invariant':<{first}}", *(f"{s:<{w}}" for s, w in zip(result.scenarios, widths, strict=True))])
    )
    for inv in result.invariants:
        row = [f"{inv:<{first}}"]
        for scenario, width in zip(result.scenarios, widths, strict=True):
            cell = cells.get((inv, scenario))
            row.append(f"{SYMBOL[cell.outcome] if cell else '-':<{width}}")
        lines.append("  ".join(row).rstrip())
    problems = [c for c in result.cells if c.outcome in ("fail", "error", "inconclusive")]
    if problems:
        lines.append("")
        for c in problems:
            lines.append(f"{SYMBOL[c.outcome]:<5} {c.invariant} in {c.scenario} [{c.severity}]: {c.reason}")
            if (said := cited(c)) is not None:  # what the check read in the answer (render() keeps ESC inert)
                lines.append(f'      answer ({said.where()}): "{said.text}"')
            if c.outcome == "inconclusive":
                lines.append(f"      {rate_interval(c, '').strip()}; more replicas can settle it")
        lines += conversation_lines(result, problems)
    lines += ["", *coverage_lines(result), *spend_lines(result)]
    if result.score is not None:
        score = result.score
        flaky = [c for c in result.cells if c.flaky]
        for c in flaky:
            lines.append(
                f"FLAKY {c.invariant} in {c.scenario}: replicas {' '.join(c.replicas)}, "
                f"pass@k {c.pass_at_k}, pass^k {c.pass_hat_k}{rate_interval(c)}"
            )
        if flaky:
            lines.append("")
        if score.composite:
            parts = ", ".join(f"{name} {part.composite:.2f}" for name, part in score.composite.items())
            lines.append(f"composite score by scenario: {parts}")
        gap = cannot_fail(result) if result.ci is None else None  # ci says it on its own overall line
        gap = gap or (failed_under_pass(result) if result.ci is None else None)
        scored = f"resilience score {score_text(result)}{left_out(result)}  {score.verdict}"
        lines.append(scored + (f"; {gap}" if gap else ""))
        lines += [f"  - {reason}" for reason in score.reasons]
        lines += [f"  ? {line}" for line in score.inconclusive]
        if score.verdict == "INCONCLUSIVE":
            lines.append(
                "settle it: more replicas (run.replicas, or {min, max}); flakeproxy plan --min-pass-rate says how many"
            )
        elif not score.passed:
            lines.append(f"reproduce: the same config with run.seed: {result.seed} replays the same faults")
    note = interruption(result)
    if note:
        lines.append(f"INCOMPLETE: {note}")
    shard = shard_note(result)
    if shard:
        lines.append(f"NOT JUDGED: {shard}")
    return "\n".join(lines)
