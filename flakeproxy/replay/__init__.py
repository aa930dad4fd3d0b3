"""Record and replay: sessions captured on the wire, matched and served back (pure: no mitmproxy)."""

from flakeproxy.config.replays import (
    Exchange,
    ReplayOptions,
    ReplayPlan,
    ReplaysConfig,
    Session,
    SseEvent,
    ToolResponse,
)
from flakeproxy.replay.build import RawExchange, build_exchange, redact_request
from flakeproxy.replay.files import load_session_file, load_sessions, write_session
from flakeproxy.replay.match import Matcher

__all__ = [
    "Exchange",
    "Matcher",
    "RawExchange",
    "ReplayOptions",
    "ReplayPlan",
    "ReplaysConfig",
    "Session",
    "SseEvent",
    "ToolResponse",
    "build_exchange",
    "load_session_file",
    "load_sessions",
    "redact_request",
    "write_session",
]
