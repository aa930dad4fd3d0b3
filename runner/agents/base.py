"""What every adapter returns, and the interface the engine drives."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from flakeproxy.results import UnreadAnswer
from flakeproxy.wire.trace import TraceContext

if TYPE_CHECKING:
    from flakeproxy.proxycore.redact import Redactor
    from flakeproxy.runner.ports import EpisodePort


@dataclass(frozen=True)
class Reply:
    """One invocation: the answer, or the reason there is none (an agent error, not an invariant failure)."""

    text: str | None
    latency_ms: float
    error: str | None = None
    unread: UnreadAnswer | None = None  # a JSON answer response_path found nothing in (error says so too)
    #: no reply came back at all (it timed out, the agent hung up mid-request or its process exited): what the agent
    #: holds after this turn is unknown, so a conversation stops here (runner/conversation.py)
    lost: bool = False
    #: it answered, but past timeout_ms (an async python agent that held its loop): timed out as any agent's late
    #: answer is, though it finished; a conversation stops here too, as on any timeout
    late: bool = False


#: One message of a conversation's history: {"role": "user" | "assistant", "content": text}.
Message = Mapping[str, str]


@dataclass(frozen=True)
class Invocation:
    """What one prompt carries besides its text: the proxy cell it runs in, the trace context that ties the
    agent's calls to it (sent as traceparent/baggage), and the slot whose agent instance and listeners run it
    (with that slot's listener URLs, name -> URL); and its place in a conversation: the episode's session id
    (fresh per episode), the turn (1 = the first) and the history before it (OpenAI-style user and assistant
    messages)."""

    cell: str | None = None
    trace: TraceContext | None = None
    slot: int | None = None
    urls: dict[str, str] = field(default_factory=dict)
    session: str | None = None
    turn: int = 1
    history: tuple[Message, ...] = ()

    def messages(self, prompt: str) -> list[dict[str, str]]:
        """The history and then this turn's prompt: what a stateless chat endpoint gets ({messages})."""
        return [dict(m) for m in self.history] + [{"role": "user", "content": prompt}]

    def environment(self) -> dict[str, str]:
        """The same, for a process: FLAKEPROXY_CELL, TRACEPARENT, BAGGAGE, FLAKEPROXY_SLOT, FLAKEPROXY_URL_<NAME>,
        FLAKEPROXY_SESSION and FLAKEPROXY_TURN."""
        env = {"FLAKEPROXY_CELL": self.cell} if self.cell else {}
        if self.session is not None:
            env.update({"FLAKEPROXY_SESSION": self.session, "FLAKEPROXY_TURN": str(self.turn)})
        env.update(self.trace.environment() if self.trace else {})
        if self.slot is not None:
            env["FLAKEPROXY_SLOT"] = str(self.slot)
        env.update({url_variable(name): url for name, url in self.urls.items()})
        return env

    def fill(self, text: str) -> str:
        """{slot}, {url:NAME} (this slot's URL of listener NAME; outside slots, the listener's own) and {session}
        in a command argument or variable."""
        if self.session is not None:
            text = text.replace("{session}", self.session)
        if self.slot is not None:
            text = text.replace("{slot}", str(self.slot))
        for name, url in self.urls.items():
            text = text.replace(f"{{url:{name}}}", url)
        return text


def url_variable(listener: str) -> str:
    """FLAKEPROXY_URL_<NAME>: the variable that tells a slot's agent instance where listener NAME is."""
    return "FLAKEPROXY_URL_" + re.sub(r"[^A-Za-z0-9]", "_", listener).upper()


class Agent(Protocol):
    """An adapter: what the runner drives, whatever the agent is (made by the registry in agents/__init__.py)."""

    @property
    def has_reset(self) -> bool: ...

    def ports(self, redactor: Redactor) -> list[EpisodePort]:
        """What keeps records of an episode besides the proxy (a python agent's wrapped tools); usually none. Each
        redacts its records with `redactor` (the config's) where it makes them: the runner redacts nothing."""

    async def start(self) -> None: ...

    async def invoke(self, prompt: str, how: Invocation | None = None) -> Reply: ...

    async def reset(self, how: Invocation | None = None) -> None: ...

    async def close(self) -> None: ...


def clip(text: str, n: int = 300) -> str:
    """Text for a one-line reason: whitespace (newlines too) collapsed, at most n characters."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n] + "..."


def telling_line(text: str) -> str:
    """The line of a program's error output that says what went wrong: the last one naming an error or
    exception (a Python traceback's last line, a Node stack's 'Error: ...'), else the last non-empty one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    named = [line for line in lines if re.match(r"([\w.]*(Error|Exception)\b|error\b|panic\b).*:", line)]
    return (named or lines or [""])[-1]
