from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import Field, model_validator

from flakeproxy.config.base import Regex
from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.workspace import in_workspace
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge, check


class FileContent(Invariant):
    """A file under run.workspace contains / does not contain a substring, or matches a regex (all must hold)."""

    type: Literal["file_content"]
    needs_answer: ClassVar[bool] = False
    reads_state: ClassVar[bool] = True
    path: str = Field(min_length=1)
    contains: str | None = None
    not_contains: str | None = None
    pattern: Regex | None = None

    @model_validator(mode="after")
    def _one_condition(self) -> FileContent:
        if self.contains is None and self.not_contains is None and self.pattern is None:
            raise ValueError("file_content needs contains, not_contains or pattern (any combination)")
        return self

    def evaluate(self, obs: Observation) -> Verdict:
        path = in_workspace(obs.workspace, self.path)
        if path is None:
            return cannot_judge("file checks need run.workspace (the agent's working directory)")
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            return check(False, "", f"cannot read {self.path}: {e.strerror}")
        problems = []
        if self.contains is not None and self.contains not in text:
            problems.append(f"does not contain {self.contains!r}")
        if self.not_contains is not None and self.not_contains in text:
            problems.append(f"contains {self.not_contains!r}")
        if self.pattern is not None and not re.search(self.pattern, text, re.MULTILINE):
            problems.append(f"does not match {self.pattern!r}")
        return check(not problems, f"{self.path} satisfies every condition", f"{self.path} " + "; ".join(problems))
