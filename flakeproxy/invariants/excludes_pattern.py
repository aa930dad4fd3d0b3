from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.config.base import Regex
from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, check, excerpt


class ExcludesPattern(Invariant):
    """None of patterns (regexes, case-insensitive) occurs in the answer."""

    forbids_content: ClassVar[bool] = True
    type: Literal["excludes_pattern"]
    patterns: list[Regex] = Field(min_length=1)

    def evaluate(self, obs: Observation) -> Verdict:
        text = obs.text or ""
        for pattern in self.patterns:
            m = re.search(pattern, text, re.IGNORECASE | re.DOTALL)
            if m:
                return check(
                    False,
                    "",
                    f"contains {m.group()!r} (pattern /{pattern}/)",
                    match=m.group(),
                    excerpt=excerpt(text, m.start(), m.end()),
                )
        return check(True, f"none of {len(self.patterns)} patterns occurs", "")
