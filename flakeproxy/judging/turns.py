"""Which turns of a conversation an invariant judges (its `turn:`), and how their verdicts make one.

Each judged turn is an episode of its own for the check: that turn's prompt, answer, error, latency and journal
entries (the requests made while it ran). `conversation` judges the whole: every answer (joined), the total
latency, the whole journal. A one-turn prompt is judged as it always was.
"""

from __future__ import annotations

from collections.abc import Callable

from flakeproxy.judging.verdict import Verdict
from flakeproxy.results import Episode

#: Judges one episode (or one turn's view of it); turn is None for the whole episode.
Judge = Callable[[Episode, int | None], Verdict]


def turn_view(episode: Episode, n: int) -> Episode:
    """Turn n (1 = the first) of a conversation as an episode of one turn."""
    assert episode.transcript is not None
    turn = episode.transcript[n - 1]
    journal = [e for e in episode.journal if e.get("turn") == n]
    update = {"prompt": turn.prompt, "answer": turn.answer, "error": turn.error, "latency_ms": turn.latency_ms}
    return episode.model_copy(update={**update, "journal": journal, "turns": None, "transcript": None})


def whole_view(episode: Episode) -> Episode:
    """The whole conversation as one episode: its answers joined (none when a turn has none), its total latency."""
    assert episode.transcript is not None
    answers = [t.answer for t in episode.transcript]
    joined = None if any(a is None for a in answers) else "\n\n".join(a or "" for a in answers)
    error = next((f"turn {t.turn}: {t.error}" for t in episode.transcript if t.error), None)
    update = {"answer": joined, "error": error if joined is None else None, "turns": None, "transcript": None}
    return episode.model_copy(update=update)


def judge_turns(choice: str | int, episode: Episode, judge: Judge) -> Verdict:
    """The invariant's verdict on the conversation: on its last turn (`last`), a given turn, every turn (`all`:
    any fail fails), some turn (`any`: one pass passes), or the whole (`conversation`)."""
    assert episode.transcript is not None
    count = len(episode.transcript)
    if choice == "conversation":
        return unsent(episode, None) or judge(whole_view(episode), None)
    if isinstance(choice, int) and choice > count:
        return beyond(choice, count)
    if choice in ("last", "all", "any") or isinstance(choice, int):
        wanted = [choice] if isinstance(choice, int) else ([count] if choice == "last" else range(1, count + 1))
        verdicts = [(n, unsent(episode, n) or judge(turn_view(episode, n), n)) for n in wanted]
        return combine(str(choice), verdicts)
    raise ValueError(f"unknown turn choice {choice!r}")


def unsent(episode: Episode, n: int | None) -> Verdict | None:
    """ERROR for a turn that was not sent (the conversation broke at an earlier turn that got no reply), or for
    the whole (`n` None) of a conversation that broke: nothing of it can be judged, whatever the check reads (a
    journal check would otherwise pass an empty turn). None when it was sent."""
    assert episode.transcript is not None
    turns = episode.transcript if n is None else [episode.transcript[n - 1]]
    missing = next((t for t in turns if not t.sent), None)
    if missing is None:
        return None
    return Verdict("error", missing.error or f"turn {missing.turn} was not sent")


def beyond(turn: int, count: int) -> Verdict:
    """A numbered turn this prompt does not have: nothing to judge (the config check refuses a turn no prompt of
    the invariant has; a shorter prompt among longer ones is n/a)."""
    return Verdict("not_applicable", f"turn: {turn}, but this prompt has {count} turn(s)")


def _on(n: int, verdict: Verdict) -> Verdict:
    """A turn's verdict, saying which turn it is."""
    return Verdict(verdict.outcome, f"turn {n}: {verdict.reason}", {**verdict.evidence, "turn": n}, verdict.score)


def combine(choice: str, verdicts: list[tuple[int, Verdict]]) -> Verdict:
    """all (and a single turn): the first fail, else the first error, else pass (n/a when every turn is n/a);
    any: the first pass, else the first error, else the first fail, else n/a."""
    by = {o: [_on(n, v) for n, v in verdicts if v.outcome == o] for o in ("pass", "fail", "error", "not_applicable")}
    order = ["pass", "error", "fail"] if choice == "any" else ["fail", "error"]
    for outcome in order:
        if by[outcome]:
            return by[outcome][0]
    if by["pass"]:
        passes = by["pass"]
        if len(passes) == 1:
            return passes[0]
        score = sum(v.value for v in passes) / len(passes)
        turns = ", ".join(str(v.evidence["turn"]) for v in passes)
        return Verdict("pass", f"turns {turns}: {passes[-1].reason}", {"turns": len(passes)}, score)
    return by["not_applicable"][0]
