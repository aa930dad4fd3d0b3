"""A WebSocket connection's messages as its journal entry keeps them: bounded in count and bytes, redacted when read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flakeproxy.proxycore.redact import Redactor

#: The most messages one connection's entry keeps (later ones are counted, not kept).
WS_MESSAGES_MAX = 500
#: The most message bytes one connection's entry keeps in all, and of any one message.
WS_BYTES_MAX = 64 * 1024
WS_MESSAGE_CAP = 4 * 1024


@dataclass(slots=True)
class WsLog:
    """What crossed one WebSocket: each message (who sent it, when, its text or size, what a fault did to it),
    and how the connection closed."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    count: int = 0  # every message, kept or not
    size: int = 0  # every message's bytes
    kept_bytes: int = 0
    close_code: int | None = None
    close_reason: str | None = None
    closed_by: str | None = None  # client, server or proxy

    def add(self, from_client: bool, content: bytes, is_text: bool, at_ms: float, fault: str | None = None) -> None:
        self.count += 1
        self.size += len(content)
        if len(self.messages) >= WS_MESSAGES_MAX or self.kept_bytes >= WS_BYTES_MAX:
            return
        kept = content[: min(WS_MESSAGE_CAP, WS_BYTES_MAX - self.kept_bytes)]
        self.kept_bytes += len(kept)
        message: dict[str, Any] = {"from": "client" if from_client else "server", "at_ms": round(at_ms, 1)}
        message["bytes"] = len(content)
        message["text" if is_text else "binary"] = kept.decode("utf-8", "replace") if is_text else kept.hex()
        message.update({"truncated": True} if len(kept) < len(content) else {})
        message.update({"fault": fault} if fault else {})
        self.messages.append(message)

    def closed(self, code: int | None, reason: str | None, by: str) -> None:
        if self.closed_by is None:
            self.close_code, self.close_reason, self.closed_by = code, reason, by

    def to_json(self) -> dict[str, Any]:
        """A copy safe to read off the event loop (the messages are copied, not the dicts, which never change)."""
        return {
            "messages": list(self.messages),
            "message_count": self.count,
            "message_bytes": self.size,
            "messages_truncated": self.count > len(self.messages),
            "close_code": self.close_code,
            "close_reason": self.close_reason,
            "closed_by": self.closed_by,
        }


def redact_ws(redactor: Redactor, data: dict[str, Any], seen: set[str]) -> dict[str, Any]:
    """The connection's messages with secret fields and the entry's redacted values replaced."""
    messages = [
        {**m, "text": redactor.body(m["text"], "", seen)} if "text" in m else m for m in data.get("messages", [])
    ]
    return {**data, "messages": messages}
