from __future__ import annotations

import re
from typing import ClassVar, Literal

from flakeproxy.config.base import Regex as Pattern
from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, check, excerpt


class Regex(Invariant):
    """The answer matches pattern (Python regex, searched anywhere; use (?i) for case-insensitive)."""

    type: Literal["regex"]
    reads_whole: ClassVar[bool] = True
    pattern: Pattern

    def evaluate(self, obs: Observation) -> Verdict:
        text = obs.text or ""
        m = re.search(self.pattern, text, re.DOTALL)
        if m:
            return check(
                True,
                f"matches /{self.pattern}/: {m.group()!r}",
                "",
                match=m.group(),
                excerpt=excerpt(text, m.start(), m.end()),
            )
        return check(False, "", f"does not match /{self.pattern}/", excerpt=excerpt(text))
