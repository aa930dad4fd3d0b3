"""How many episodes a contract run overlaps, and why: one answer for the engine (runner/engine.py) and for
`flakeproxy plan`, which prints what the run will do rather than what run.concurrency asks for."""

from __future__ import annotations

from dataclasses import dataclass

from flakeproxy.config.model import FlakeproxyConfig
from flakeproxy.config.warnings import needs_attribution, shared_state


@dataclass(frozen=True)
class RunConcurrency:
    """Episodes at once, and in words why that many (e.g. `1 at a time (run.concurrency 3 ignored: ...)`)."""

    episodes: int
    said: str


def run_concurrency(config: FlakeproxyConfig) -> RunConcurrency:
    """Episodes overlap only when the proxy can tell their requests apart and no check reads shared state
    (config_warnings says so at the start of a run); with slots, one episode per slot."""
    asked = config.run.concurrency
    if needs_attribution(config):
        return RunConcurrency(
            1,
            f"1 at a time (run.concurrency {asked} ignored: run.attribution is none, so the proxy could not tell "
            "overlapping episodes' requests apart; set run.attribution: header, trace or slots)",
        )
    state = shared_state(config)
    if state:
        ignored = f"run.concurrency {asked} ignored: " if asked > 1 else ""
        return RunConcurrency(
            1, f"1 at a time ({ignored}{', '.join(state)} read(s) the workspace or a service, which episodes share)"
        )
    if config.run.attribution == "slots":
        slots = config.proxy.slots
        return RunConcurrency(slots, f"{slots} at a time (one per slot of listeners, proxy.slots {slots})")
    if asked == 1:
        return RunConcurrency(1, "1 at a time (run.concurrency 1)")
    attribution = config.run.attribution
    return RunConcurrency(asked, f"{asked} at a time (run.concurrency {asked}, run.attribution: {attribution})")
