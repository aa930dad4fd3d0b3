"""A scenario whose faults cut the LLM answers the agent received short, judged only by checks that cannot tell a
cut answer from a whole one: every cell PASSes and nothing says why that proves little. A new user's starter
contract (it answers, it says something, no raw errors, no PII) passed `"Sorry, I "` under stream_cut and
`"According to TrialQuotes, AAPL is"` under truncated_response in silence; the run now says so, in one line naming
the fix."""

from __future__ import annotations

from collections.abc import Sequence

from flakeproxy.config import FlakeproxyConfig
from flakeproxy.results import CellResult, ScenarioCoverage

#: faults that leave the agent a fragment of an answer that still reads as one (the SDKs accept both silently)
CUTTING = ("truncated_response", "stream_cut")


def blind_to_cuts(config: FlakeproxyConfig, cov: ScenarioCoverage, cells: Sequence[CellResult]) -> str | None:
    """The warning for a scenario whose cutting faults reached the agent while every check passed and none of
    those judged could tell a fragment from a whole answer (Invariant.reads_whole, not negated); None otherwise."""
    cut = [f for f in cov.faults if f.kind in CUTTING and f.applied]
    judged = [c for c in cells if c.scenario == cov.scenario and c.outcome != "not_applicable"]
    if not cut or not judged or any(c.outcome != "pass" for c in judged):
        return None
    kinds = {inv.id: inv for inv in (config.contract.invariants if config.contract else [])}
    for cell in judged:
        invariant = kinds.get(cell.invariant)
        if invariant is None or (invariant.reads_whole and not invariant.negate):
            return None  # one could tell (or one this cannot see)
    faults = ", ".join(f"{f.section}[{f.index}] {f.kind} (applied {f.applied})" for f in cut)
    return (
        f"warning: scenario {cov.scenario}: {faults} cut the LLM answers the agent received short and every check "
        "passed, but "
        f"none of them ({', '.join(c.invariant for c in judged)}) reads whether an answer is whole: add a regex, "
        "contains or similarity check that every whole answer keeps (e.g. when: llm_faults_active)"
    )
