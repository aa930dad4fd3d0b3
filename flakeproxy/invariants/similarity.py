from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.detectors.similarity import METHOD, similarity
from flakeproxy.judging.verdict import Observation, Verdict, check


class Similarity(Invariant):
    """The answer is close to expected, judged lexically (flakeproxy ships no embedding model).

    The score is the word and character-trigram cosine; differing numbers or negations count as a mismatch
    (the score is halved, below 0.5).
    """

    type: Literal["similarity"]
    reads_whole: ClassVar[bool] = True
    expected: str = Field(min_length=1)
    threshold: float = Field(0.8, ge=0.0, le=1.0)

    def evaluate(self, obs: Observation) -> Verdict:
        score = similarity(obs.text or "", self.expected)
        return check(
            score >= self.threshold,
            f"similarity {score} >= {self.threshold}",
            f"similarity {score} < {self.threshold}",
            similarity=score,
            method=METHOD,
        )
