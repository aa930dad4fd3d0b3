"""Adaptive replicas (`run.replicas: {min, max}`): a group-sequential rate rule with exact alpha spending.

The rule. A cell is looked at after `min` replicas and then every `every` replicas up to `max` (the looks).
At each look n it is PASS when its passes k reach the look's PASS boundary, FAIL when they fall to its
FAIL boundary, and otherwise stays open, unless it can no longer (or almost never) reach either, when it is
settled INCONCLUSIVE. The first look that settles a cell decides it; replicas its scenario runs afterwards
for other cells do not reopen it.

The error guarantee (alpha spending, Lan and DeMets 1983, with the power family of Kim and DeMets 1987).
With alpha = (1 - confidence) / 2 and t = n / max, the PASS boundaries are chosen look by look, from exact
binomial path probabilities at p = min_pass_rate computed by dynamic programming, so that the chance of
crossing a PASS boundary at any look up to n is at most alpha * sqrt(t); the FAIL boundaries alike. At
t = 1 the whole alpha is spent and no more. Crossing a PASS boundary is an increasing event of the
outcomes, so its chance only falls as p falls: for every p < min_pass_rate a false PASS has probability at
most alpha, and for every p >= min_pass_rate a false FAIL too: the same per-cell statement as the fixed rate
rule, kept under every look. Each boundary is computed as if the other did not exist (non-binding), so
the statement holds whatever stops a cell; the design records the exact spent alpha (`error_pass`,
`error_fail`, at most alpha up to float rounding).

Early INCONCLUSIVE (futility, non-binding). At a look, a cell whose predictive chance of reaching PASS or
FAIL by max is below `futility` (default 0.05) is settled INCONCLUSIVE: the chance under a Jeffreys
Beta(1/2, 1/2) prior updated with its k of n, computed for every (n, k) at once by backward induction on
the Polya urn the prior implies. A cell that cannot reach either boundary any more is always settled so
(deterministic curtailment). This only turns would-be verdicts into INCONCLUSIVE, so it never adds a
false verdict; it is where most replicas are saved on cells near the threshold.

Reporting a settled cell: its verdict comes from the boundaries. The exact interval of its k of n (stats.py)
may be shown for reading, but after an early stop it is a little optimistic; say "settled at look n".

Why not an anytime-valid confidence sequence: with a known max, exact spending over the planned looks is
tighter at every n; confidence sequences pay for looks that never come. Outcomes must be given in
replica order, not completion order (the order in which results arrive can depend on the outcome).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from flakeproxy.judging.stats import RateOutcome, StatsModel, check_level, check_min_pass_rate, percent, tail_alpha

SPENDING_RHO = 0.5  # alpha * t**rho: between Pocock-like (early) and O'Brien-Fleming-like (late) spending


class AdaptiveDesign(StatsModel):
    """The looks and boundaries of one adaptive rule, with the exact alpha each side spent at p = threshold."""

    min_replicas: int
    max_replicas: int
    min_pass_rate: float
    confidence: float
    every: int
    futility: float
    looks: tuple[int, ...]
    pass_at: tuple[int, ...]  # PASS at looks[j] when passes >= pass_at[j] (looks[j] + 1: not possible there)
    fail_at: tuple[int, ...]  # FAIL at looks[j] when passes <= fail_at[j] (-1: not possible there)
    give_up: tuple[tuple[tuple[int, int], ...], ...]  # per look, inclusive ranges of passes settled INCONCLUSIVE
    error_pass: float
    error_fail: float

    @property
    def alpha(self) -> float:
        return tail_alpha(self.confidence, "two")

    def verdict_at(self, j: int, passes: int) -> RateOutcome | None:
        """The verdict at look j for a cell open until then with this many passes; None: still open."""
        if passes >= self.pass_at[j]:
            return "pass"
        if passes <= self.fail_at[j]:
            return "fail"
        if any(lo <= passes <= hi for lo, hi in self.give_up[j]):
            return "inconclusive"
        return None


class CellState(StatsModel):
    """Where one cell stands: settled (outcome set, need 0) or open (need: replicas more before its next look)."""

    outcome: RateOutcome | None
    passes: int
    replicas: int  # the replicas the verdict used (settled) or those given so far (open)
    need: int
    reason: str

    @property
    def settled(self) -> bool:
        return self.outcome is not None


def adaptive_design(
    min_replicas: int,
    max_replicas: int,
    min_pass_rate: float,
    confidence: float = 0.95,
    every: int = 1,
    futility: float = 0.05,
) -> AdaptiveDesign:
    """The adaptive rule for these settings (cached: the same settings give the same object)."""
    _check_design(min_replicas, max_replicas, every, futility)
    check_min_pass_rate(min_pass_rate)
    check_level("confidence", confidence)
    return _design(min_replicas, max_replicas, min_pass_rate, confidence, every, futility)


def adaptive_step(outcomes: Sequence[bool], design: AdaptiveDesign) -> CellState:
    """Settle a cell from its outcomes so far (pass = True, in replica order), or say how many more it needs."""
    k, given = 0, min(len(outcomes), design.max_replicas)
    for j, n in enumerate(design.looks):
        if n > given:
            k = sum(outcomes[:given])
            return CellState(outcome=None, passes=k, replicas=given, need=n - given, reason=_open(k, given, n))
        k += sum(outcomes[design.looks[j - 1] if j else 0 : n])
        verdict = design.verdict_at(j, k)
        if verdict is not None:
            return CellState(outcome=verdict, passes=k, replicas=n, need=0, reason=_why(verdict, k, n, j, design))
    raise AssertionError("the last look always settles")  # pragma: no cover


def _check_design(min_replicas: int, max_replicas: int, every: int, futility: float) -> None:
    if not 1 <= min_replicas <= max_replicas:
        raise ValueError(f"replicas need 1 <= min <= max, got min={min_replicas}, max={max_replicas}")
    if every < 1:
        raise ValueError(f"looks must be at least 1 replica apart, got every={every}")
    if not 0 <= futility < 1:
        raise ValueError(f"futility must be in [0, 1), got {futility}")


@lru_cache(maxsize=64)
def _design(mn: int, mx: int, threshold: float, confidence: float, every: int, futility: float) -> AdaptiveDesign:
    looks = tuple(sorted({*range(mn, mx + 1, every), mx}))
    alpha = tail_alpha(confidence, "two")
    pass_at, error_pass = _boundaries(looks, threshold, alpha, strict=False)
    fail_crossings, error_fail = _boundaries(looks, 1 - threshold, alpha, strict=True)  # failures at 1 - t
    fail_at = tuple(n - a for n, a in zip(looks, fail_crossings, strict=True))
    give_up = _give_up(looks, pass_at, fail_at, futility)
    return AdaptiveDesign(
        min_replicas=mn,
        max_replicas=mx,
        min_pass_rate=threshold,
        confidence=confidence,
        every=every,
        futility=futility,
        looks=looks,
        pass_at=pass_at,
        fail_at=fail_at,
        give_up=give_up,
        error_pass=error_pass,
        error_fail=error_fail,
    )


def spending(t: float, alpha: float) -> float:
    """The alpha a side may have spent by information fraction t = n / max."""
    return float(alpha * t**SPENDING_RHO)


def advance(dist: list[float], p: float, steps: int) -> list[float]:
    """The distribution of passes after `steps` more Bernoulli(p) replicas."""
    for _ in range(steps):
        nxt = [0.0] * (len(dist) + 1)
        for k, mass in enumerate(dist):
            if mass:
                nxt[k] += mass * (1 - p)
                nxt[k + 1] += mass * p
        dist = nxt
    return dist


def _boundaries(looks: tuple[int, ...], p: float, alpha: float, strict: bool) -> tuple[tuple[int, ...], float]:
    """Per look the fewest successes that cross (n + 1: none may), spending at most spending(n / max) in all.

    strict: the crossing's probability must stay below the allowance (the FAIL side, like the fixed rule's
    'upper bound below the threshold'); otherwise at or below it (PASS: 'lower bound at or above')."""
    dist, n, used, out = [1.0], 0, 0.0, []
    for look in looks:
        dist, n = advance(dist, p, look - n), look
        allowance = spending(look / looks[-1], alpha) - used
        a, tail = n + 1, 0.0
        while a > 0 and (tail + dist[a - 1] < allowance if strict else tail + dist[a - 1] <= allowance):
            a, tail = a - 1, tail + dist[a - 1]
        used += tail
        dist[a:] = [0.0] * (n + 1 - a)
        out.append(a)
    return tuple(out), used


def _give_up(
    looks: tuple[int, ...], pass_at: tuple[int, ...], fail_at: tuple[int, ...], futility: float
) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per look, the ranges of passes whose predictive chance of a verdict by max is below futility (or 0)."""
    index = {n: j for j, n in enumerate(looks)}
    mx = looks[-1]
    after = [0.0] * (mx + 2)  # chance of a verdict from (n + 1, k) on, entering that state
    runs: list[tuple[tuple[int, int], ...]] = [()] * len(looks)
    for n in range(mx, -1, -1):
        j = index.get(n)
        here = []
        for k in range(n + 1):
            if j is not None and (k >= pass_at[j] or k <= fail_at[j]):
                here.append(1.0)
                continue
            q = (k + 0.5) / (n + 1)  # Jeffreys posterior predictive of a pass
            here.append(0.0 if n == mx else q * after[k + 1] + (1 - q) * after[k])
        if j is not None:
            stop = [
                not (k >= pass_at[j] or k <= fail_at[j]) and (here[k] < futility or here[k] == 0.0)
                for k in range(n + 1)
            ]
            runs[j] = _ranges(stop)
        after = here
    return tuple(runs)


def _ranges(flags: list[bool]) -> tuple[tuple[int, int], ...]:
    out, start = [], None
    for i, flag in enumerate([*flags, False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            out.append((start, i - 1))
            start = None
    return tuple(out)


def _open(k: int, given: int, next_look: int) -> str:
    return f"{k}/{given} passed; open until the look at replica {next_look}"


def _why(verdict: RateOutcome, k: int, n: int, j: int, d: AdaptiveDesign) -> str:
    rule = f"adaptive {d.min_replicas}-{d.max_replicas}, min_pass_rate {d.min_pass_rate:g}"
    risk = f"false-verdict risk <= {percent(d.alpha)}"
    if verdict == "pass":
        why = f"PASS needs {d.pass_at[j]} there"
    elif verdict == "fail":
        why = f"FAIL at {d.fail_at[j]} or fewer there"
    elif n == d.max_replicas:
        why = f"max reached; PASS needed {d.pass_at[j]}, FAIL {d.fail_at[j]} or fewer"
    else:
        why = f"under {percent(d.futility)} chance of PASS or FAIL by replica {d.max_replicas}"
    return f"{k}/{n} passed by replica {n}: {why} ({rule}, {risk})"
