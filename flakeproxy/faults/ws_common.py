"""What the WebSocket faults share: when a one-shot fault acts on the server's messages."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from flakeproxy.faults.base import Fault
from flakeproxy.wire.websocket import Trigger

#: Close codes a close frame may not carry (RFC 6455 7.4.1): an endpoint reports them for what happened without one
UNSENDABLE = {1004: "reserved", 1005: "no status received", 1006: "abnormal closure", 1015: "TLS failure"}


def _sendable(code: int) -> int:
    if code in UNSENDABLE:
        raise ValueError(
            f"{code} ({UNSENDABLE[code]}) cannot be sent in a close frame (a client reports it itself); use 1001, "
            "1011, 1012, 1013 or a 4000-4999 code, or ws_drop / connection_cap for a connection lost mid-way"
        )
    return code


#: A close code a proxy can send: 1000-4999, less the ones only an endpoint reports (the agent would see 1000)
CloseCode = Annotated[int, Field(ge=1000, le=4999), AfterValidator(_sendable)]


class WsFault(Fault):
    """A fault on a WebSocket target's server messages (the agent's own messages pass untouched)."""

    after_messages: int = Field(0, ge=0, description="Let this many server messages through first (0: none).")
    at_event: str | None = Field(
        None, description="Act only on a server event whose JSON `type` matches this glob, e.g. response.done."
    )

    def trigger(self) -> Trigger:
        return Trigger(self.after_messages, self.at_event)
