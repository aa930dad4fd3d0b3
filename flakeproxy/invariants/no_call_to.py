from __future__ import annotations

import fnmatch
from typing import ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import Field, model_validator

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.verdict import Observation, Verdict, check


class NoCallTo(Invariant):
    """The agent made no request to the given targets or hosts (globs) in the episode."""

    type: Literal["no_call_to"]
    needs_answer: ClassVar[bool] = False
    reads_journal: ClassVar[bool] = True
    targets: list[str] = Field(default_factory=list)
    hosts: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _something(self) -> NoCallTo:
        if not self.targets and not self.hosts:
            raise ValueError("no_call_to needs targets or hosts")
        return self

    def evaluate(self, obs: Observation) -> Verdict:
        for e in obs.journal:
            host = urlsplit(e.get("url", "")).hostname or ""
            hit = [t for t in e.get("targets", []) if any(fnmatch.fnmatchcase(t, g) for g in self.targets)]
            if hit or any(fnmatch.fnmatchcase(host, g) for g in self.hosts):
                return check(
                    False,
                    "",
                    f"called {hit[0] if hit else host}: {e.get('method')} {e.get('url')}",
                    request=e.get("url"),
                )
        return check(True, f"no call to {self.targets + self.hosts}", "")
