"""The rows of bench/perf.py's table: a figure, its baseline from the same run, the goal and whether it is met."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Row:
    measure: str
    ours: float
    base: float | None
    unit: str
    goal: str
    ratio_goal: Callable[[float], bool] | None = None  # on ours / base; None: `absolute` decides
    absolute: Callable[[float], bool] | None = None

    def met(self) -> str:
        if self.ratio_goal is not None and self.base:
            return "met" if self.ratio_goal(self.ours / self.base) else "NOT met"
        if self.absolute is not None:
            return "met" if self.absolute(self.ours) else "NOT met"
        return ""

    def cells(self) -> list[str]:
        fmt = "{:,.0f}" if self.ours >= 100 else "{:.2f}"
        base = fmt.format(self.base) + f" {self.unit}" if self.base is not None else ""
        ratio = f"{self.ours / self.base:.2f}" if self.base else ""
        return [self.measure, fmt.format(self.ours) + f" {self.unit}", base, ratio, self.goal, self.met()]


HEAD = ["measure", "flakeproxy", "baseline", "ratio", "goal", ""]


def table(rows: list[Row], markdown: bool) -> str:
    cells = [HEAD, *(r.cells() for r in rows)]
    if markdown:
        lines = ["| " + " | ".join(c) + " |" for c in cells]
        return "\n".join([lines[0], "|" + "---|" * len(HEAD), *lines[1:]])
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEAD))]
    return "\n".join("  ".join(c[i].ljust(widths[i]) for i in range(len(HEAD))) for c in cells)
