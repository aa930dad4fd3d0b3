"""What every report format says the same way: the headline, a cell's episodes and time, retries seen,
faults decided vs applied. Tolerant of an interrupted run (no score, no coverage, cells missing)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from flakeproxy.invariants import retries
from flakeproxy.judging.coverage import count_coverage
from flakeproxy.results import CellResult, Episode, RunResult, ScenarioCoverage

OUTCOME_WORD = {
    "pass": "PASS",
    "fail": "FAIL",
    "error": "ERROR",
    "not_applicable": "n/a",
    "inconclusive": "INCONCLUSIVE",
}


def replay_only(result: RunResult) -> bool:
    """A `flakeproxy replay run`: sessions replayed, no contract matrix, no ci pillars."""
    return result.replay is not None and result.ci is None and result.score is None


def verdict(result: RunResult) -> str:
    """PASS, FAIL, or INCOMPLETE for a run that stopped before it was scored (ci: the overall verdict; replay
    run: the replay verdict)."""
    if result.ci is not None:
        return result.ci.verdict
    if result.replay is not None and replay_only(result) and result.complete:
        return result.replay.verdict
    if result.score is None:
        return "INCOMPLETE"
    return result.score.verdict


def title(result: RunResult) -> str:
    """What ran: the contract's name, and `ci` when the run was the four pillars, `replay` for a replay run."""
    if result.ci is not None:
        return f"ci: {result.contract}" if result.contract else "ci"
    if replay_only(result):
        return f"replay: {result.contract}" if result.contract else "replay"
    return result.contract or "flakeproxy run"


def headline(result: RunResult) -> tuple[str, str]:
    """The number at the top and what it is: the ci overall, the replay score, or the resilience score."""
    if result.ci is not None:
        return (f"{result.ci.overall:.1f}%" if result.ci.overall is not None else "not scored"), "overall score"
    if result.replay is not None and replay_only(result):
        score = result.replay.score
        return (f"{score:.1f}%" if score is not None else "not scored"), "replay score"
    return score_text(result), "resilience score" + left_out(result)


def left_out(result: RunResult) -> str:
    """What the resilience score leaves out, when it leaves out INCONCLUSIVE cells (a 100% beside a cell whose
    episodes failed a third of the time, too few to decide, read as a clean run)."""
    score = result.score
    n = score.counts.get("inconclusive", 0) if score is not None and score.resilience is not None else 0
    return f" of the decided cells ({n} INCONCLUSIVE left out)" if n else ""


def cannot_fail(result: RunResult) -> str | None:
    """On a PASS that nothing judged could have turned into a FAIL, one sentence saying so; else None."""
    why = result.ci.cannot_fail if result.ci is not None else result.score.cannot_fail if result.score else None
    if why is None or verdict(result) != "PASS":
        return None
    return f"nothing judged could fail this run: {why}"


def failed_under_pass(result: RunResult) -> str | None:
    """On a PASS, the cells that failed or could not be judged all the same (non-critical: they only lower the
    score), in one clause; a trial's run PASSed with a high check failing a third of its cells, unsaid."""
    if verdict(result) != "PASS":
        return None
    bad = [c for c in result.cells if c.outcome in ("fail", "error")]
    if not bad:
        return None
    named = ", ".join(f"{c.invariant} in {c.scenario}" for c in bad[:3]) + (" ..." if len(bad) > 3 else "")
    return (
        f"{len(bad)} cell(s) of non-critical checks failed or could not be judged ({named}): they lower the score, "
        "they do not fail the run (severity: critical, or scoring.min_resilience, makes them)"
    )


def _by_signal(result: RunResult) -> bool:
    """A signal (Ctrl-C, SIGTERM) stopped the run, not the run itself (a trial read "interrupted" where nothing
    had interrupted it)."""
    return (result.interrupted_by or "").startswith("SIG")


def interruption_title(result: RunResult) -> str:
    """The banner's word for a run that did not finish: interrupted by a signal, or stopped early by itself."""
    return "Interrupted." if _by_signal(result) else "Stopped early."


def interruption(result: RunResult) -> str | None:
    """One sentence when the run did not finish, else None."""
    if result.complete:
        return None
    said = f" ({result.interrupted_by})" if result.interrupted_by else ""
    how = "was interrupted" if _by_signal(result) else "stopped early"
    return f"The run {how}{said}: this report shows only what ran before it stopped."


def shard_note(result: RunResult) -> str | None:
    """One sentence for the results of one shard of a sharded run (its episodes ran, unjudged), else None: its
    reports must not read as a verdict (a junit.xml of no test looked green to a CI that published it)."""
    if result.shard is None:
        return None
    shard = result.shard
    return (
        f"Shard {shard.index} of {shard.count}: its {len(result.episodes)} episode(s) ran unjudged; the verdict is "
        f"`flakeproxy merge`'s, from all {shard.count} shards' results.json."
    )


def score_text(result: RunResult) -> str:
    if result.score is None or result.score.resilience is None:
        return "not scored"
    return f"{result.score.resilience:.1f}%"


def episodes_of(result: RunResult, cell: CellResult) -> list[Episode]:
    """The cell's episodes that results.json holds (an interrupted run may lack some)."""
    by_id = {e.id: e for e in result.episodes}
    return [by_id[i] for i in cell.episodes if i in by_id]


def cell_seconds(result: RunResult, cell: CellResult) -> float:
    """The time the agent took over the cell's episodes."""
    return sum(e.latency_ms for e in episodes_of(result, cell)) / 1000


def scenario_seconds(result: RunResult, scenario: str) -> float:
    return sum(e.latency_ms for e in result.episodes if e.scenario == scenario) / 1000


def retry_seqs(episode: Episode) -> set[int]:
    """The episode's requests that are retries (flakeproxy.invariants.retries: a repeat, in its turn, of a request
    that failed, or one the SDK says is a retry)."""
    return retries.retry_seqs(episode.journal)


def retries_seen(result: RunResult, scenario: str | None = None) -> int:
    return sum(len(retry_seqs(e)) for e in result.episodes if scenario is None or e.scenario == scenario)


def target_of(entry: dict[str, Any]) -> str:
    targets = entry.get("targets") or []
    return ", ".join(str(t) for t in targets) or str(entry.get("listener") or "?")


def path_of(entry: dict[str, Any]) -> str:
    parts = urlsplit(str(entry.get("url") or ""))
    return parts.path + (f"?{parts.query}" if parts.query else "")


def coverage(result: RunResult) -> list[ScenarioCoverage]:
    """results.coverage, or (an interrupted run has none) the same counted from the episodes' journals (the
    faults that were decided: the config is not at hand here)."""
    if result.coverage:
        return result.coverage
    out = []
    for scenario in result.scenarios:
        episodes = [e for e in result.episodes if e.scenario == scenario]
        if episodes:
            out.append(count_coverage(scenario, episodes, {}))
    return out


@dataclass(frozen=True)
class Counts:
    tests: int
    failures: int
    errors: int
    skipped: int

    @classmethod
    def of(cls, cells: list[CellResult]) -> Counts:
        n = Counter(c.outcome for c in cells)
        return cls(len(cells), n["fail"], n["error"], n["not_applicable"] + n["inconclusive"])


def problems(result: RunResult) -> list[CellResult]:
    """Failed cells first, then the ones that errored, then the INCONCLUSIVE ones, in matrix order."""
    order = {"fail": 0, "error": 1, "inconclusive": 2}
    return sorted((c for c in result.cells if c.outcome in order), key=lambda c: order[c.outcome])


def agent_error(result: RunResult, cell: CellResult) -> str | None:
    """The first agent error among the cell's episodes (an error cell caused by the agent, not the judge)."""
    return next((e.error for e in episodes_of(result, cell) if e.error), None)


def replicated(result: RunResult) -> list[CellResult]:
    """The cells judged over several replicas (they carry a pass rate and its interval), in matrix order."""
    return [c for c in result.cells if c.pass_rate is not None]


def interval_name(cells: list[CellResult]) -> str:
    """How the intervals were computed: `Wilson 95%`, `exact (Clopper-Pearson) 95%`, or both named."""
    names = {"wilson": "Wilson", "clopper_pearson": "exact (Clopper-Pearson)"}
    kinds = sorted({(names[c.pass_rate_interval or "wilson"], c.pass_rate_confidence or 0.95) for c in cells})
    return ", ".join(f"{name} {confidence * 100:g}%" for name, confidence in kinds)


def rate_facts(cell: CellResult) -> dict[str, str]:
    """A replicated cell's pass rate, its interval's bounds, pass@k and pass^k, as text (JUnit properties)."""
    values = {
        "replicas": " ".join(cell.replicas),
        "pass_rate": cell.pass_rate,
        "pass_rate_low": cell.pass_rate_low,
        "pass_rate_high": cell.pass_rate_high,
        "interval": interval_name([cell]),
        "pass_at_k": cell.pass_at_k,
        "pass_hat_k": cell.pass_hat_k,
    }
    return {name: f"{value:.4f}" if isinstance(value, float) else str(value) for name, value in values.items()}


def rate_interval(cell: CellResult, lead: str = ",") -> str:
    """`, pass rate 67% [21%, 94%]` for a cell with replicas (its Wilson interval), else ''."""
    if cell.pass_rate is None or cell.pass_rate_low is None or cell.pass_rate_high is None:
        return ""
    return f"{lead} pass rate {cell.pass_rate:.0%} [{cell.pass_rate_low:.0%}, {cell.pass_rate_high:.0%}]"
