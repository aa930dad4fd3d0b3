"""Combining replicas of a cell: the aggregation rules, flakiness, pass@k and pass^k."""

from __future__ import annotations

from math import comb

from flakeproxy.results import Outcome


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k replicas drawn from n (c of them passing) passes."""
    k = min(k, n)
    return 1.0 if n - c < k else round(1 - comb(n - c, k) / comb(n, k), 4)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that k replicas drawn from n all pass."""
    k = min(k, n)
    return round(comb(c, k) / comb(n, k), 4)


def aggregate_replicas(outcomes: list[Outcome], scores: list[float], rule: str, k: int) -> tuple[Outcome, str]:
    """The cell's outcome from its replicas' (errors count as not passed)."""
    n, c = len(outcomes), outcomes.count("pass")
    if n == 1:
        return outcomes[0], ""
    ok = {
        "all": c == n,
        "majority": c > n / 2,
        "mean": sum(scores) / n >= 0.5,
        "at_least_k": c >= k,
        "pass_at_k": pass_at_k(n, c, k) >= 0.5,
    }[rule]
    if ok:
        return "pass", f"{c}/{n} replicas passed ({rule})"
    worst: Outcome = "fail" if "fail" in outcomes else "error"
    return worst, f"{c}/{n} replicas passed ({rule}{f', k={k}' if rule in ('at_least_k', 'pass_at_k') else ''})"
