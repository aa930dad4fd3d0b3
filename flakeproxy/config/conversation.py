"""Golden prompts and probes that are conversations: several user turns sent to the agent in one episode.

A plain string stays one turn (everything about it is as before); a list of strings, or a mapping
{id, turns}, is a conversation: its turns go to the agent in order, in one episode (one reset before turn 1),
with its answers kept turn by turn.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from flakeproxy.config.base import StrictModel

#: Joins a conversation's turns into the key that names it when it has no id.
TURN_JOINER = " / "


class Conversation(StrictModel):
    """A conversation: the user's turns, in order; turn 2 may depend on what turn 1 was answered."""

    id: str | None = Field(
        None, min_length=1, pattern=r"^\S+$", description="Names it in results and reports (default: its turns)."
    )
    turns: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1, description="The user's turns, in order.")

    @property
    def key(self) -> str:
        """What names it in an episode's `prompt`: its id, else its turns joined."""
        return self.id or TURN_JOINER.join(self.turns)


def _as_conversation(value: Any) -> Any:
    """A list of strings is a conversation's turns (a mapping is read as {id, turns}; a string stays a string)."""
    return {"turns": value} if isinstance(value, list) else value


#: One golden prompt or probe: a string (one turn) or a conversation.
Prompt = Annotated[str | Conversation, BeforeValidator(_as_conversation)]


def prompt_key(prompt: str | Conversation) -> str:
    """The text that names a prompt in episodes and verdicts: the prompt itself, or the conversation's key."""
    return prompt if isinstance(prompt, str) else prompt.key


def turn_count(prompt: str | Conversation) -> int:
    """How many turns a golden prompt or probe has (a one-turn prompt: 1)."""
    return 1 if isinstance(prompt, str) else len(prompt.turns)


def prompt_turns(prompt: str | Conversation) -> list[str] | None:
    """A conversation's turns; None for a one-turn prompt (a string)."""
    return None if isinstance(prompt, str) else list(prompt.turns)


def prompt_text(prompt: str | Conversation) -> str:
    """The text a single message would carry: the prompt, or a conversation's last turn."""
    return prompt if isinstance(prompt, str) else prompt.turns[-1]
