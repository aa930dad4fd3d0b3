from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from flakeproxy.invariants.base import Invariant
from flakeproxy.judging.detectors.similarity import METHOD, similarity
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge, check


class BehaviorUnchanged(Invariant):
    """The answer under chaos stays similar to the baseline (auto: the same prompt with no chaos).

    Similarity is lexical (word and character-trigram cosine; flakeproxy ships no embedding model); differing
    numbers or negations count as a mismatch (the score is halved, below 0.5).
    """

    type: Literal["behavior_unchanged"]
    reads_whole: ClassVar[bool] = True
    uses_baseline: ClassVar[bool] = True
    baseline: str = Field("auto", min_length=1, description="'auto', or the expected answer itself.")
    similarity_threshold: float = Field(0.75, ge=0.0, le=1.0)

    def evaluate(self, obs: Observation) -> Verdict:
        baseline = obs.baseline if self.baseline == "auto" else self.baseline
        if baseline is None:
            return cannot_judge("no baseline: the no-chaos run of this prompt did not answer")
        score = similarity(obs.text or "", baseline)
        return check(
            score >= self.similarity_threshold,
            f"similarity to the baseline {score}",
            f"similarity to the baseline {score} < {self.similarity_threshold}",
            similarity=score,
            baseline=baseline[:200],
            method=METHOD,
        )
