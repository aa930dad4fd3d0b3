"""What the WebSocket faults share: when a one-shot fault acts on the server's messages."""

from __future__ import annotations

from pydantic import Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.websocket import Trigger


class WsFault(Fault):
    """A fault on a WebSocket target's server messages (the agent's own messages pass untouched)."""

    after_messages: int = Field(0, ge=0, description="Let this many server messages through first (0: none).")
    at_event: str | None = Field(
        None, description="Act only on a server event whose JSON `type` matches this glob, e.g. response.done."
    )

    def trigger(self) -> Trigger:
        return Trigger(self.after_messages, self.at_event)
