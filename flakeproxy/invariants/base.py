"""The envelope every invariant shares: identity, severity, when it applies, how it weighs."""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field

from flakeproxy.config.base import StrictModel
from flakeproxy.config.conversation import Prompt
from flakeproxy.judging.verdict import Observation, Verdict, cannot_judge

if TYPE_CHECKING:
    from flakeproxy.config.scenario import Scenario

Severity = Literal["critical", "high", "medium", "low"]
TURN_WORDS = ("last", "all", "any", "conversation")


def _turn_choice(value: Any) -> Any:
    """One line for a wrong `turn:`, naming both forms (the union's own errors named only the words)."""
    if value in TURN_WORDS or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    raise ValueError(f"must be one of {', '.join(TURN_WORDS)}, or a turn number from 1 (the first turn)")


TurnChoice = Annotated[
    Literal["last", "all", "any", "conversation"] | Annotated[int, Field(ge=1)], BeforeValidator(_turn_choice)
]
When = Literal["always", "tool_faults_active", "llm_faults_active", "any_chaos_active", "no_chaos"]

#: Resilience-score weight per severity (spec: critical 3, high 2, medium 1, low 1).
SEVERITY_WEIGHTS: dict[str, int] = {"critical": 3, "high": 2, "medium": 1, "low": 1}


class Invariant(StrictModel):
    """Fields common to every invariant type.

    What a type needs is declared, not inferred from its name (the runner never branches on types):
    needs_answer: an episode where the agent gave no answer cannot be judged (ERROR, with the agent's error);
    reads_journal: it judges the traffic the proxy saw; requests that could not be tied to the episode make
    its verdict ERROR, never PASS; reads_state: it reads the workspace or a service, so it is judged right
    after its episode, before the next reset; uses_baseline: it compares with a calm answer (baseline: auto);
    reads_spans: it judges the agent's own spans, so it needs proxy.otlp; forbids_content: it looks for what must
    never appear in an answer (a leak), so on a conversation every turn matters, not only the last (validate warns
    about one left on the default `turn: last`); forbids_secrets: it is a check against leaks of secrets, so an
    answer that repeated a secret value its episode sent FAILs it (flakeproxy.judging.repeated_secrets);
    reads_whole: it reads what an answer says, so an answer cut short can fail it (unless negated: a check that
    forbids text passes a fragment too; flakeproxy.judging.blind); calls_out: judging it sends requests or runs
    commands of its own (an LLM judge, a shell command, a query), which may reach the proxy's listeners, so a run
    does not open the next episode before it is judged (runner.episodes `_merges`).
    """

    needs_answer: ClassVar[bool] = True
    reads_journal: ClassVar[bool] = False
    reads_state: ClassVar[bool] = False
    uses_baseline: ClassVar[bool] = False
    reads_spans: ClassVar[bool] = False
    forbids_content: ClassVar[bool] = False
    forbids_secrets: ClassVar[bool] = False
    reads_whole: ClassVar[bool] = False
    calls_out: ClassVar[bool] = False

    id: str = Field(min_length=1, pattern=r"^\S+$")
    severity: Severity = "medium"
    when: When = "always"
    negate: bool = Field(False, description="Pass when the check does NOT hold.")
    description: str | None = None
    probes: list[Prompt] | None = Field(
        None,
        min_length=1,
        description="Prompts run instead of golden_prompts for this invariant (each a string, or a conversation: "
        "a list of turns, or {id, turns}).",
    )
    turn: TurnChoice = Field(
        "last",
        description="Which turns of a conversation it judges: last (the default), all (every turn must pass), any "
        "(one passing turn is enough), conversation (the whole: every answer, the total latency, the whole "
        "journal), or a turn number (1 = the first). A one-turn prompt has one turn: all of these judge it.",
    )
    weight: float = Field(1.0, ge=0.0, description="Relative weight in the composite score.")
    gate: bool = Field(False, description="A failure forces the composite score to 0.")
    scenarios: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None,
        min_length=1,
        description="Judged only in these scenarios of the matrix (names or globs, e.g. llm-down*), and there only "
        "where `when` holds too; elsewhere n/a. None: every scenario `when` admits.",
    )

    def judged_in(self, scenario: Scenario) -> bool:
        """Whether this invariant is evaluated in this scenario: its `when`, and its `scenarios` if it names some."""
        return scenario.applies(self.when) and self.names(scenario.name)

    def names(self, scenario: str) -> bool:
        """`scenarios` admits this scenario's name (or names none: all are admitted)."""
        return self.scenarios is None or any(fnmatch.fnmatchcase(scenario, p) for p in self.scenarios)

    def evaluate(self, obs: Observation) -> Verdict:
        """Judge one observation. Types that cannot judge yet say so: an error, never a pass."""
        return cannot_judge(f"{getattr(self, 'type', '?')} checks are not evaluated by this version of flakeproxy")
