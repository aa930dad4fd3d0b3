"""The seeded flaky agent of bench/adaptive.py: a python agent (type: python) whose answer keeps or breaks each
of its contract's rules with a set probability per scenario.

The episode's label (`scenario | p0 | r3`, what flakeproxy.current_cell() gives a python agent run without a
proxy) picks the scenario and replica; each rule's draw is seeded by (repetition seed, scenario, replica,
rule), so a fixed-N run and an adaptive run of the same repetition see the same draws for the episodes both
run. The bench sets MIX and SEED before each run.
"""

from __future__ import annotations

import random

import flakeproxy

MIX: dict[str, list[float]] = {}  # scenario -> the chance its answer keeps rule j (invariant keeps-rule-j)
SEED = 0


def draw(scenario: str, replica: str, rule: int) -> float:
    return random.Random(f"{SEED}|{scenario}|{replica}|{rule}").random()


def run(prompt: str) -> str:
    label = flakeproxy.current_cell() or ""
    scenario, _, replica = (part.strip() for part in label.split("|"))
    words = [
        f"keeps-rule-{j}" if draw(scenario, replica, j) < p else f"breaks-rule-{j}" for j, p in enumerate(MIX[scenario])
    ]
    return " ".join(words)


def reset() -> None:
    """Nothing to reset: every answer depends on its episode's draws alone (and no stateful-check episode runs)."""
