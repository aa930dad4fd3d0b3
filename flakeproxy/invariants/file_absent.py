from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.workspace import in_workspace
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge, check


class FileAbsent(Invariant):
    """A file does not exist under run.workspace."""

    type: Literal["file_absent"]
    needs_answer: ClassVar[bool] = False
    reads_state: ClassVar[bool] = True
    path: str = Field(min_length=1)

    def evaluate(self, obs: Observation) -> Verdict:
        path = in_workspace(obs.workspace, self.path)
        if path is None:
            return cannot_judge("file checks need run.workspace (the agent's working directory)")
        return check(not path.exists(), f"{self.path} is absent", f"{self.path} exists", path=str(path))
