from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.invariants.workspace import in_workspace
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge, check


class FileExists(Invariant):
    """A file exists under run.workspace."""

    type: Literal["file_exists"]
    needs_answer: ClassVar[bool] = False
    reads_state: ClassVar[bool] = True
    path: str = Field(min_length=1)

    def evaluate(self, obs: Observation) -> Verdict:
        path = in_workspace(obs.workspace, self.path)
        if path is None:
            return cannot_judge("file checks need run.workspace (the agent's working directory)")
        return check(path.exists(), f"{self.path} exists", f"{self.path} does not exist", path=str(path))
