"""The envelope every fault shares: what it targets and when it fires."""

from __future__ import annotations

from random import Random
from typing import Annotated

from pydantic import Field

from flakeproxy.config.base import Milliseconds, Probability, StrictModel
from flakeproxy.wire.action import Action
from flakeproxy.wire.call import Call


class Fault(StrictModel):
    """Targeting and firing rules common to every fault and context attack."""

    tool: str | None = Field(None, description="A target name, or a glob of target names ('*' for all).")
    match_url: str | None = Field(None, description="A glob on the full request URL.")
    probability: Probability = Field(1.0, description="Chance that a matching call is faulted.")
    after_calls: int = Field(
        1, ge=0, description="Fire from the N-th matching call of the episode on (0 or 1 = from the first)."
    )
    times: int | None = Field(None, ge=1, description="Fire at most N times per episode; None = no limit.")
    turns: list[Annotated[int, Field(ge=1)]] | None = Field(
        None,
        min_length=1,
        description="Fire only on these turns of a conversation (1 = the first); None = on every turn. "
        "after_calls and times still count every matching call of the episode, whatever its turn.",
    )

    @property
    def kind(self) -> str:
        """The mode (faults) or type (context attacks) that names this fault."""
        return str(getattr(self, "mode", None) or getattr(self, "type", ""))

    def act(self, call: Call, rng: Random) -> Action:
        """What this fault does to call (it has already been chosen to fire)."""
        raise NotImplementedError(f"{type(self).__name__} does not define act()")

    def marker(self) -> str | None:
        """Context attacks on a tool's answer: a string of the payload that shows it reached the model when a
        later LLM request carries it (None: nothing to look for)."""
        return None


class Delay(Fault):
    """A fault that waits: delay_ms plus up to jitter_ms drawn from the seeded random."""

    delay_ms: Milliseconds = 1000
    jitter_ms: Milliseconds = 0
