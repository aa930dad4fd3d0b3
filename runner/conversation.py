"""One episode's conversation: its turns sent to the agent in order, after the one reset the episode had.

Before each turn the ports (the proxy first) are told which turn runs, so the journal entries carry it and faults
with `turns:` fire only on theirs; the agent gets the turn with the episode's session id and the history so far
(the earlier user turns and its own answers). A one-turn prompt is one invocation, as it always was.

A turn that got no reply at all (it timed out, the agent hung up mid-request, a one_process agent exited) breaks
the conversation: what the agent holds after it is unknown (it may still be working on that turn), so the later
turns are not sent, and each is recorded as not sent (TurnRecord.sent false) with the reason; their checks are
ERROR. A turn the agent answered with an error (an HTTP error status, an answer response_path cannot read, a
callable that raised) is a reply: the agent finished that turn, so the conversation goes on, as a user's would,
and the next turns show whether it recovers (the point of a fault on one turn). Each lost turn costs timeout_ms,
once, not once per remaining turn.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from typing import Any

from flakeproxy.results import Episode, TurnRecord
from flakeproxy.runner.agents.base import Agent, Invocation, Message, Reply
from flakeproxy.runner.answers import reply_texts
from flakeproxy.runner.ports import EpisodePort


def new_session() -> str:
    """A session id of its own for each episode ({session}, FLAKEPROXY_SESSION): never reused, across runs too."""
    return f"fp-{uuid.uuid4().hex}"


@dataclasses.dataclass(frozen=True)
class Exchange:
    """What the agent said: the last turn's reply (its latency the whole conversation's) and, for a
    conversation, each turn's reply (`sent`: how many turns were sent; the rest have a reply saying why not)."""

    reply: Reply
    turns: list[tuple[str, Reply]] | None = None
    sent: int | None = None

    def texts(self) -> list[str | None]:
        """Every text to scrub of secrets: the answer and error, then each turn's answer and error."""
        out = reply_texts(self.reply)
        for _, reply in self.turns or []:
            out += reply_texts(reply)
        return out

    def transcript(self, texts: Sequence[str | None]) -> list[TurnRecord] | None:
        """The turns as the episode keeps them, from the scrubbed texts (in the order texts() gave them)."""
        if self.turns is None:
            return None
        records = []
        sent = len(self.turns) if self.sent is None else self.sent
        for n, (prompt, reply) in enumerate(self.turns, 1):
            answer, error = texts[2 * n], texts[2 * n + 1]
            record = TurnRecord(
                turn=n, prompt=prompt, answer=answer, error=error, latency_ms=_ms(reply), sent=n <= sent
            )
            records.append(record)
        return records


def _ms(reply: Reply) -> float:
    return round(reply.latency_ms, 1)


async def converse(agent: Agent, ports: Sequence[EpisodePort], episode: Episode, how: Invocation) -> Exchange:
    """The episode's prompt, or each turn of its conversation in order (the agent's session closed after)."""
    if episode.turns is None:
        try:
            return Exchange(await agent.invoke(episode.prompt, how))
        finally:
            await end_session(agent, how)  # a one_process agent's process, for one turn too
    history: list[Message] = []
    turns: list[tuple[str, Reply]] = []
    try:
        for n, text in enumerate(episode.turns, 1):
            for port in ports:
                await port.turn(how.cell or "", n)
            reply = await agent.invoke(text, dataclasses.replace(how, turn=n, history=tuple(history)))
            turns.append((text, reply))
            history.append({"role": "user", "content": text})
            if reply.text is not None:
                history.append({"role": "assistant", "content": reply.text})
            if reply.lost or reply.late:  # no reply in time: the conversation is broken, its later turns not sent
                break
    finally:
        await end_session(agent, how)
    sent = len(turns)
    if sent < len(episode.turns):
        why = f"not sent: turn {sent} got no reply ({turns[-1][1].error}), so the conversation stopped there"
        turns += [(text, Reply(None, 0.0, why)) for text in episode.turns[sent:]]
    last = turns[-1][1]
    return Exchange(
        Reply(last.text, sum(r.latency_ms for _, r in turns), last.error, lost=any(r.lost for _, r in turns)),
        turns,
        sent,
    )


async def end_session(agent: Agent, how: Invocation) -> None:
    """Tell an adapter that keeps something per session (a one_process command agent) that the episode is over."""
    ending: Any = getattr(agent, "end_session", None)
    if ending is not None:
        await ending(how)
