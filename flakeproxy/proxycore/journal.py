"""The journal: one entry per request the proxy saw, with secrets redacted (flakeproxy.proxycore.redact) and
bodies capped."""

from __future__ import annotations

import asyncio
import heapq
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from flakeproxy.proxycore.redact import DEFAULT, Redactor
from flakeproxy.proxycore.ws_log import WsLog, redact_ws
from flakeproxy.wire.coverage import Coverage
from flakeproxy.wire.encoding import decode_prefix
from flakeproxy.wire.record import fault_json

BODY_CAP_BYTES = 64 * 1024


def agent_left(error: str) -> bool:
    """Whether a journal entry's error is the agent going away (mitmproxy's "Client disconnected."), not the
    upstream or a fault failing the exchange."""
    return "client disconnected" in error.lower()


def redact_headers(headers: Iterable[tuple[str, str]], redactor: Redactor = DEFAULT) -> dict[str, str]:
    """Headers as a dict (repeated names joined with ', '), secret values replaced (Redactor.headers)."""
    return redactor.headers(headers)


def readable(kept: bytes, encoding: str | None) -> bytes:
    """Captured bytes as the agent's HTTP client reads them: gzip, deflate, br or zstd undone as far as the kept
    part goes (a streamed body is captured as it came on the wire), at most BODY_CAP_BYTES; else as they are."""
    decoded = decode_prefix(kept, encoding, BODY_CAP_BYTES)
    return kept if decoded is None else decoded


class BodyCapture:
    """Keeps the first `cap` bytes of a body and counts all of it; `encoding` is the body's
    Content-Encoding when it is captured as it came on the wire."""

    __slots__ = ("_kept", "_parts", "cap", "encoding", "size", "tap")

    def __init__(self, cap: int = BODY_CAP_BYTES, encoding: str | None = None) -> None:
        self.cap = cap
        self.encoding = encoding
        self.size = 0
        #: also given every chunk, with the encoding it is in (the LLM call's UsageMeter reads its usage)
        self.tap: Callable[[bytes, str | None], None] | None = None
        self._parts: list[bytes] = []
        self._kept = 0

    def add(self, chunk: bytes) -> None:
        if self.tap is not None:
            self.tap(chunk, self.encoding)
        self.size += len(chunk)
        room = self.cap - self._kept
        if room > 0 and chunk:
            self._parts.append(chunk[:room])
            self._kept += min(room, len(chunk))

    def text(self) -> str:
        return readable(b"".join(self._parts), self.encoding).decode("utf-8", "replace")

    def snapshot(self) -> tuple[tuple[bytes, ...], int]:
        """The kept bytes (immutable pieces) and the size so far: cheap, and safe to read elsewhere."""
        return tuple(self._parts), self.size

    @property
    def kept(self) -> int:
        return self._kept

    @property
    def truncated(self) -> bool:
        return self.size > self._kept


@dataclass(slots=True)  # slots: a long run holds tens of thousands of these (issue 23, RSS)
class JournalEntry:
    """What happened to one request. `episode` is None when it could not be attributed to one episode."""

    seq: int
    episode: str | None
    episode_candidates: list[str]
    started_at: float
    listener: str
    targets: list[str]
    method: str
    url: str
    request_headers: dict[str, str]
    request_body: str
    request_bytes: int
    fault: dict[str, Any] | None = None
    slot: int | None = None  # the slot of listeners the request came in on (proxy.slots)
    turn: int | None = None  # the turn of its episode's conversation (None: never told one; left out of the JSON)
    #: the episode its header or baggage named when that one was not open (it had ended, or never was): the
    #: request is none's; None (left out of the JSON) when it named none, or an open one
    named_episode: str | None = None
    upstream_called: bool = True
    status: int | None = None
    latency_ms: float | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str = ""
    response_bytes: int = 0
    body_truncated: bool = False
    streamed: bool = False
    error: str | None = None
    #: the connection closed before the response body ended: the agent got response_bytes of it, then the close
    closed_mid_body: bool = False
    complete: bool = False  # False while the response is still on its way (e.g. a long stream)
    #: the indexes (in its scenario's context_attacks) of the attacks whose payload this LLM request carries
    carries_attacks: list[int] = field(default_factory=list)
    #: an LLM call's usage as the provider reported it (flakeproxy.wire.usage.Usage JSON), set when it ends; None
    #: for a request to a target without an `api:`
    usage: dict[str, Any] | None = None
    #: a WebSocket connection (the upgrade's 101 answered): its messages and close (flakeproxy.proxycore.ws_log)
    ws: WsLog | None = field(default=None, repr=False, compare=False)
    #: the agent has all it will get of this exchange (it ended, or the proxy ended the agent's side early)
    delivered: bool = field(default=False, repr=False, compare=False)
    capture: BodyCapture | None = field(default=None, repr=False, compare=False)
    coverage: Coverage | None = field(default=None, repr=False, compare=False)
    redactor: Redactor | None = field(default=None, repr=False, compare=False)  # set by Journal.add

    accounted: int = field(default=0, repr=False, compare=False)  # bytes the journal counts for it

    def snapshot(self, known: Iterable[str] = ()) -> Snapshot:
        """The entry as it is now, taken on the event loop in microseconds; render it anywhere. `known`: secret
        values of its episode (from its other requests) to scrub from it too."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _LIVE}
        if self.turn is None:
            del data["turn"]  # a one-turn prompt's entries look as they always did
        if self.named_episode is None:
            del data["named_episode"]
        data["websocket"] = self.ws.to_json() if self.ws is not None else None
        if self.fault is not None:
            data["fault"] = fault_json(self.fault, self.coverage)
        redactor, known = self.redactor or DEFAULT, frozenset(known)
        if self.capture is None:
            return Snapshot(data, None, 0, None, redactor, known)
        parts, size = self.capture.snapshot()
        return Snapshot(data, parts, size, self.capture.encoding, redactor, known)

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON, secrets redacted (the entry is left as it is); for a response still streaming,
        the body received so far; the fault with whether it applied (see flakeproxy.wire.coverage)."""
        return self.snapshot().to_json()

    def weight(self) -> int:
        """Roughly the bytes this entry holds: its capped bodies, headers and a fixed overhead."""
        kept = self.capture.kept if self.capture is not None else len(self.response_body)
        headers = sum(len(k) + len(v) for h in (self.request_headers, self.response_headers) for k, v in h.items())
        messages = self.ws.kept_bytes if self.ws is not None else 0
        return ENTRY_OVERHEAD_BYTES + len(self.url) + len(self.request_body) + kept + headers + messages


@dataclass(frozen=True)
class Snapshot:
    """An entry's JSON fields at one moment, with the captured body still as bytes."""

    fields: dict[str, Any]
    body: tuple[bytes, ...] | None  # None: the fields already hold the body
    size: int  # bytes on the wire
    encoding: str | None = None
    redactor: Redactor = DEFAULT
    known: frozenset[str] = frozenset()  # secrets of the episode, from its other requests

    def to_json(self) -> dict[str, Any]:
        """The JSON with secrets redacted (done here, off the event loop: it parses bodies)."""
        seen = set(self.known)
        if self.body is None:
            out = self.redactor.entry(self.fields, seen)
        else:
            kept = b"".join(self.body)
            text = readable(kept, self.encoding).decode("utf-8", "replace")
            body = {"response_body": text, "response_bytes": self.size, "body_truncated": self.size > len(kept)}
            out = self.redactor.entry({**self.fields, **body}, seen)
        if out.get("websocket") is not None:
            out["websocket"] = redact_ws(self.redactor, out["websocket"], seen)
        return out


#: How long ending an episode waits for its exchanges to reach the agent (a stream the agent still reads).
SETTLE_S = 2.0
#: What the journal keeps at most of the entries of episodes (bodies are capped at BODY_CAP_BYTES each); the
#: oldest go first.
JOURNAL_MAX_BYTES = 64 * 1024 * 1024
#: ... and of entries of no episode (pass-through traffic, or traffic no episode could be tied to): a proxy used
#: as a plain sidecar between runs, or one the runner never asks, keeps the last few thousand of them, not 64 MiB.
LOOSE_MAX_BYTES = 8 * 1024 * 1024
#: What one entry costs beyond its bodies and headers (the Python objects, measured with tracemalloc through the
#: real proxy: ~1.9 KB for a small JSON exchange, of which ~0.3 KB its headers and bodies), counted against the
#: budget so that the budget is what the journal really holds.
ENTRY_OVERHEAD_BYTES = 1600
#: kept out of the JSON; the live parts are read by snapshot()
_LIVE = {"capture", "coverage", "accounted", "redactor", "delivered", "ws"}


class _Held:
    """Entries in seq order, bounded in bytes (the oldest go first), always keeping the newest."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.entries: deque[JournalEntry] = deque()
        self.bytes = 0

    def over(self) -> bool:
        return self.bytes > self.max_bytes and len(self.entries) > 1


class Journal:
    """Entries in arrival (= seq) order, bounded in bytes: the oldest go first past max_bytes (the entries of
    episodes) or loose_max_bytes (those of no episode); `dropped` counts what went."""

    def __init__(
        self, max_bytes: int = JOURNAL_MAX_BYTES, redactor: Redactor | None = None, loose_max_bytes: int | None = None
    ) -> None:
        self.redactor = redactor or DEFAULT  # the config's: Redactor(config.redact)
        self._episodes = _Held(max_bytes)
        self._loose = _Held(min(max_bytes, LOOSE_MAX_BYTES) if loose_max_bytes is None else loose_max_bytes)
        #: episode id -> its entries still held, in seq order: ending an episode reads its own, not the whole journal
        self._by_episode: dict[str, deque[JournalEntry]] = {}
        self.dropped = 0
        self._seq = 0
        self.loose_seq = 0  # the seq of the newest entry of no episode: a runner reads them only once it moves

    @property
    def bytes(self) -> int:
        return self._episodes.bytes + self._loose.bytes

    @property
    def entries(self) -> list[JournalEntry]:
        return list(self._in_order())

    def _in_order(self) -> Iterator[JournalEntry]:
        return heapq.merge(self._episodes.entries, self._loose.entries, key=lambda e: e.seq)

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def add(self, entry: JournalEntry) -> None:
        entry.redactor = entry.redactor or self.redactor
        entry.accounted = entry.weight()
        held = self._loose if entry.episode is None else self._episodes
        held.entries.append(entry)
        if entry.episode is None:
            self.loose_seq = max(self.loose_seq, entry.seq)
        else:
            self._by_episode.setdefault(entry.episode, deque()).append(entry)
        held.bytes += entry.accounted
        self._trim(held)

    def settle(self, entry: JournalEntry) -> None:
        """Count what an entry grew to (its response arrived) if the journal still holds it."""
        if entry.accounted:
            held = self._loose if entry.episode is None else self._episodes
            new = entry.weight()
            held.bytes += new - entry.accounted
            entry.accounted = new
            self._trim(held)

    def _trim(self, held: _Held) -> None:
        while held.over():
            old = held.entries.popleft()
            if old.episode is not None and (same := self._by_episode.get(old.episode)):
                same.popleft()  # the oldest of the journal is the oldest of its episode
                if not same:
                    del self._by_episode[old.episode]
            held.bytes -= old.accounted
            old.accounted = 0
            self.dropped += 1

    def for_episode(self, episode_id: str) -> list[JournalEntry]:
        return list(self._by_episode.get(episode_id, ()))

    async def wait_delivered(self, episode_id: str, timeout_s: float = SETTLE_S) -> list[int]:
        """Wait (at most timeout_s) until the agent has all it will get of every exchange of an episode, so that no
        entry is read half-decided; the seqs of those still open after that."""
        deadline = time.monotonic() + timeout_s
        while True:
            open_ = [e.seq for e in self._by_episode.get(episode_id, ()) if not e.delivered]
            if not open_ or time.monotonic() >= deadline:
                return open_
            await asyncio.sleep(0.005)

    def page(
        self, since: int = 0, limit: int = 1000, episode: str | None = None, unattributed: bool = False
    ) -> tuple[list[JournalEntry], int | None]:
        """Up to `limit` entries with seq > since (of one episode, or those of no episode), and the seq to
        pass as `since` for the next page (None when there is no more)."""
        out: list[JournalEntry] = []
        held = self._loose.entries if unattributed else self._in_order()
        for entry in self._by_episode.get(episode, ()) if episode is not None else held:
            if entry.seq <= since or (episode is not None and entry.episode != episode):
                continue
            if unattributed and entry.episode is not None:
                continue
            if len(out) == limit:
                return out, out[-1].seq
            out.append(entry)
        return out, None

    def clear(self) -> None:
        for held in (self._episodes, self._loose):
            for entry in held.entries:
                entry.accounted = 0
            held.entries.clear()
            held.bytes = 0
        self._by_episode.clear()
        self.dropped = 0
        self.loose_seq = 0
